"""Code generation targets: one plugin per folder, see base.py."""

from zmlir.targets.base import LoweringOptions, Stage, Target, get_target, targets

__all__ = ["LoweringOptions", "Stage", "Target", "get_target", "targets"]
