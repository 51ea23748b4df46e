"""One rank of test_distributed.py: a unirecord.Loader under torch.distributed
(gloo). Usage: dist_worker.py RANK WORLD PORT RECORDS OUT_JSON"""
import json
import sys

import torch
import torch.distributed as dist

import unirecord


def ids_of(loader):
    out = []
    for _images, _labels, ids in loader:
        out += ids.tolist()
    return out


def main():
    rank, world, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    records, out_json = sys.argv[4], sys.argv[5]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    kwargs = dict(batch_size=8, seed=4, fields=unirecord.Fields(return_ids=True), threads=1,
                  transform=unirecord.CenterCrop(16, resize=16))
    loader = unirecord.Loader(records, shuffle=True, **kwargs)  # num_shards/shard_id from torch.distributed
    result = {"rank": rank, "num_shards": loader.num_shards, "shard_id": loader.shard_id, "len": len(loader)}
    result["epoch0"] = ids_of(loader)
    loader.set_epoch(1)
    result["epoch1"] = ids_of(loader)
    result["sequential"] = ids_of(unirecord.Loader(records, shuffle=False, **kwargs))
    sampler = torch.utils.data.DistributedSampler(range(90), shuffle=False)  # also from torch.distributed
    result["torch_sequential"] = list(sampler)
    # Resume: one batch of epoch 1, state, a new loader continues.
    part = unirecord.Loader(records, shuffle=True, **kwargs)
    part.set_epoch(1)
    first = part.next_batch()[2].tolist()
    state = part.state_dict()
    resumed = unirecord.Loader(records, shuffle=True, **kwargs)
    resumed.load_state_dict(state)
    result["resumed"] = first + ids_of(resumed)
    # Equal batch counts on every rank, checked through gloo itself.
    counts = torch.tensor([len(loader), len(result["epoch0"]) // 8 + (len(result["epoch0"]) % 8 > 0)])
    gathered = [torch.zeros_like(counts) for _ in range(world)]
    dist.all_gather(gathered, counts)
    result["all_counts"] = [g.tolist() for g in gathered]
    publish(result, out_json)


def publish(result, out_json):
    """Gathers every rank's `result` through gloo; rank 0 writes the list to
    `out_json`. Ends the process group."""
    everything = [None] * dist.get_world_size()
    dist.all_gather_object(everything, result)
    if dist.get_rank() == 0:
        with open(out_json, "w") as f:
            json.dump(everything, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
