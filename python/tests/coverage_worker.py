"""One rank of test_coverage.py under torch.distributed (gloo), started as its
own process. Usage:

  coverage_worker.py stop RANK WORLD PORT RECORDS CKPT_DIR
      reads 2 batches of epoch 2 in lockstep, checkpoints its state_dict
      after each (CKPT_DIR/step{1,2}-rank{RANK}.pickle), then kills itself
      (SIGKILL) mid-epoch.
  coverage_worker.py resume RANK WORLD PORT RECORDS CKPT_DIR OLD_WORLD MODE OUT_JSON
      every rank loads the list of the old ranks' step-2 checkpoints (MODE
      "stale_state": their sampler states of step 1 with the coverage of
      step 2; "stale_coverage": the other way round), reads to the epoch's
      end, and rank 0 writes check_coverage over every rank's digest (and the
      ids each rank read) to OUT_JSON."""
import json
import os
import pickle
import signal
import sys

import torch.distributed as dist

import unirecord

BATCH = 4


def loader_for(records):
    # num_shards and shard_id from torch.distributed
    return unirecord.Loader(records, BATCH, shuffle=True, seed=5, threads=1,
                            transform=unirecord.CenterCrop(16, resize=16), fields=unirecord.Fields(return_ids=True),
                            sampler=unirecord.Sampler(coverage="ids"))


def checkpoint(ckpt_dir, step, rank):
    return os.path.join(ckpt_dir, f"step{step}-rank{rank}.pickle")


def stop(rank, records, ckpt_dir):
    loader = loader_for(records)
    loader.set_epoch(2)
    for step in (1, 2):
        loader.next_batch()
        with open(checkpoint(ckpt_dir, step, rank), "wb") as f:
            pickle.dump(loader.state_dict(), f)
        dist.barrier()  # a training step: every rank has checkpointed
    os.kill(os.getpid(), signal.SIGKILL)


def resume(rank, records, ckpt_dir, old_world, mode, out_json):
    def load(step, r):
        with open(checkpoint(ckpt_dir, step, r), "rb") as f:
            return pickle.load(f)

    states = [load(2, r) for r in range(old_world)]
    if mode == "stale_state":
        states = [{**load(1, r), "coverage": s["coverage"]} for r, s in enumerate(states)]
    elif mode == "stale_coverage":
        states = [{**s, "coverage": load(1, r)["coverage"]} for r, s in enumerate(states)]
    loader = loader_for(records)
    loader.load_state_dict(states)
    ids = [i for _images, _labels, batch in loader for i in batch.tolist()]
    digests = [None] * dist.get_world_size()
    dist.all_gather_object(digests, loader.coverage())  # a Coverage pickles as its bytes
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, ids)
    if rank == 0:
        check = unirecord.check_coverage(digests)
        with open(out_json, "w") as f:
            json.dump({"ok": check.ok, "message": check.message, "missing_ids": check.missing_ids,
                       "repeated_ids": check.repeated_ids, "padding": check.padding, "ids": everyone,
                       "shards": [d.shard_id for d in digests], "complete": [d.complete for d in digests]}, f)
    dist.barrier()
    dist.destroy_process_group()


def main():
    phase, rank, world, port, records, ckpt_dir = sys.argv[1:7]
    rank, world = int(rank), int(world)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    if phase == "stop":
        stop(rank, records, ckpt_dir)
    else:
        resume(rank, records, ckpt_dir, int(sys.argv[7]), sys.argv[8], sys.argv[9])


if __name__ == "__main__":
    main()
