"""The panel across processes: each rank serializes its shard's panel state
(bytes), the ranks exchange them with torch.distributed.all_gather_object (most
RL trainers already run it), and every rank merges them in rank order into the
global panel. Without torch (or outside an initialized process group) the
exchange is simulated in-process, so this file runs anywhere.

    torchrun --nproc-per-node 2 distributed.py     # real ranks
    /usr/bin/python3 distributed.py                # simulated ranks
"""
import numpy as np
import logratio


def shard_state(train, rollout, mask):
    """This rank's panel state: a few hundred bytes."""
    return logratio.panel_state(train, rollout, mask)


def all_gather_states(state, world):
    """torch.distributed when it is running, else `world` (a list of every
    rank's state, for the simulation)."""
    try:
        import torch.distributed as dist  # noqa: F401
        if dist.is_available() and dist.is_initialized():
            out = [None] * dist.get_world_size()
            dist.all_gather_object(out, state)
            return out
    except ImportError:
        pass
    return world


def make_batch(seed, B=32, T=128):
    rng = np.random.default_rng(seed)
    rollout = -np.abs(rng.standard_t(3, size=(B, T))).astype(np.float32) * 0.4
    train = np.minimum(rollout + 0.01 * rng.standard_t(3, size=(B, T)).astype(np.float32), 0)
    mask = np.arange(T)[None, :] < rng.integers(1, T + 1, size=B)[:, None]
    return train.astype(np.float32), rollout, mask


def main():
    train, rollout, mask = make_batch(0)
    ranks = 4
    cuts = np.linspace(0, train.shape[0], ranks + 1).astype(int)
    # each rank: its rows; here the ranks are simulated one after another
    states = [shard_state(train[a:b], rollout[a:b], mask[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    gathered = all_gather_states(states[0], states)
    merged = logratio.merge_panel_states(gathered)
    single = logratio.panel(train, rollout, mask, quantiles=False)
    # delta_abs_max_row counts rows within the shard that held the maximum
    # (a state knows only its own rows), so it is left out of the comparison.
    skip = {"delta_abs_max_row", "delta_abs_max_column"}
    worst = max(abs(merged[k] - single[k]) / max(abs(single[k]), 1e-300)
                for k in single if k not in skip and single[k] is not None and abs(single[k]) > 1e-6)
    print(f"{ranks} ranks, {len(states[0])} bytes per state: delta_abs_mean {merged['delta_abs_mean']:.6g}, "
          f"max relative difference to one process {worst:.2e}")
    assert merged["tokens"] == single["tokens"] and worst < 1e-6
    print("distributed ok")


if __name__ == "__main__":
    main()
