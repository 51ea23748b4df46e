"""One rank of test_elastic.py, started by torch.multiprocessing.spawn: a
unirecord.Loader whose num_shards/shard_id come from torch.distributed (gloo).
Phase "stop": reads `batches` batches of epoch 2 and writes the ids and the
state; phase "resume": loads a state and reads the rest of the epoch."""
import torch.distributed as dist
from dist_worker import publish

import unirecord


def run(rank, world, port, records, batch_size, phase, batches, state_hex, out_json):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    loader = unirecord.Loader(records, batch_size, shuffle=True, seed=5, threads=1,
                              transform=unirecord.CenterCrop(16, resize=16), fields=unirecord.Fields(return_ids=True))
    assert (loader.num_shards, loader.shard_id) == (world, rank)
    ids = []
    if phase == "stop":
        loader.set_epoch(2)
        for _ in range(batches):
            ids += loader.next_batch()[2].tolist()
    else:
        loader.load_state_dict({"sampler_state": bytes.fromhex(state_hex)})
        for _images, _labels, batch_ids in loader:
            ids += batch_ids.tolist()
    state = loader.state_dict()
    result = {"rank": rank, "ids": ids, "state": state["sampler_state"].hex(), "position": state["position"],
              "epoch": state["epoch"], "len": len(loader)}
    publish(result, out_json)
