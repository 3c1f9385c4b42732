"""Runs verl's own rollout-correction tests (vendored here unmodified, see
README.md) against logratio.verl: `verl.trainer.ppo.rollout_corr_helper` is an
alias of logratio.verl in sys.modules. With verl installed, the tests' other
verl imports are verl's; without it, verl.protocol.DataProto is
logratio.verl's stand-in and the config classes and the policy loss come from
verl_standins.py. The tests draw torch.randn inputs: seeded here per test so a
failure reproduces."""
import os
import sys
import types

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import logratio.verl as drop_in  # noqa: E402

HELPER = "verl.trainer.ppo.rollout_corr_helper"


def _install_standins():
    import verl_standins as s
    names = ["verl", "verl.protocol", "verl.trainer", "verl.trainer.ppo", "verl.trainer.ppo.core_algos",
             "verl.trainer.config", "verl.trainer.config.algorithm", "verl.workers", "verl.workers.config",
             "verl.workers.config.actor"]
    mods = {n: types.ModuleType(n) for n in names}
    for n, m in mods.items():  # parents know their children, as after a real import
        parent, _, child = n.rpartition(".")
        if parent:
            setattr(mods[parent], child, m)
    mods["verl.protocol"].DataProto = drop_in.DataProto
    mods["verl"].DataProto = drop_in.DataProto
    mods["verl.trainer.ppo.core_algos"].compute_policy_loss_vanilla = s.compute_policy_loss_vanilla
    mods["verl.trainer.config.algorithm"].RolloutCorrectionConfig = s.RolloutCorrectionConfig
    mods["verl.workers.config.actor"].ActorConfig = s.ActorConfig
    mods["verl.workers.config.actor"].PolicyLossConfig = s.PolicyLossConfig
    sys.modules.update(mods)


try:
    import verl.trainer.ppo  # noqa: F401  (verl installed: its own modules but the helper)
except ImportError:
    _install_standins()
sys.modules[HELPER] = drop_in
sys.modules["verl.trainer.ppo"].rollout_corr_helper = drop_in


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(20260129)
    yield


def pytest_collection_modifyitems(items):
    """verl's test_metrics_completeness reports missing metrics by returning False, which pytest
    7 only warns about: here a test returning False fails."""
    for item in items:
        fn = getattr(item, "obj", None)
        if callable(fn) and not getattr(fn, "_false_fails", False):
            def checked(*a, __fn=fn, **k):
                assert __fn(*a, **k) is not False, f"{__fn.__name__} returned False"
            checked._false_fails = True
            import functools
            functools.update_wrapper(checked, fn)
            item.obj = checked
