"""Code generation targets: one plugin per folder, see base.py."""

from zmlir.targets.base import LoweringOptions, Target, get_target, targets

__all__ = ["LoweringOptions", "Target", "get_target", "targets"]
