"""One rank of test_packing.py's elastic test, started by
torch.multiprocessing: a packing unirecord.Loader whose num_shards/shard_id
come from torch.distributed (gloo). Phase "stop": reads `steps` batches and
gathers every rank's state_dict with all_gather_object; phase "resume":
loads the list of the old ranks' state_dicts and reads the rest of the epoch.
Each rank publishes the (document, token) pairs it delivered (a token's value
is 1000 * document + index + 1)."""
import pickle

import torch.distributed as dist
from dist_worker import publish

import unirecord


WINDOW = 16


def loader_for(path, strategy, **kwargs):
    return unirecord.Loader(path, 3, True, threads=1, seed=7, pack=unirecord.Pack(32, strategy=strategy, window=WINDOW),
                            fields=unirecord.Fields(["tokens"], image_field=None, label_field=None), **kwargs)


def run(rank, world, port, path, strategy, phase, steps, states_file, out_json):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    loader = loader_for(path, strategy)  # num_shards/shard_id from torch.distributed
    assert (loader.num_shards, loader.shard_id) == (world, rank)
    if phase == "resume":
        with open(states_file, "rb") as f:
            loader.load_state_dict(pickle.load(f))
    delivered = []
    for _ in range(steps if phase == "stop" else 1 << 30):
        batch = loader.next_batch()
        if batch is None:
            break
        tokens = batch["tokens"][batch["segment_ids"] != 0].tolist()
        delivered += [((t - 1) // 1000, (t - 1) % 1000) for t in tokens]
    result = {"rank": rank, "delivered": delivered}
    if phase == "stop":
        states = [None] * world
        dist.all_gather_object(states, loader.state_dict())
        if rank == 0:
            with open(states_file, "wb") as f:
                pickle.dump(states, f)
    publish(result, out_json)
