"""PTX's special registers: which names are ones (`%tid.x`, `%clock64`, ...)
and what type each is read as (`FunctionImporter.special_reg`, a
`ptx.sreg`); those with no `ptx.sreg` case import as operands of the
generic `ptx.inst` (generic.py)."""

from __future__ import annotations

import re

SPECIAL_REGS = {
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z",
    "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
    "%laneid", "%warpid", "%nwarpid", "%clock", "%clock64", "%lanemask_eq",
    "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%smid", "%nsmid",
    "%gridid", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%dynamic_smem_size",
    "%total_smem_size", "%reserved_smem_offset_begin", "%reserved_smem_offset_end",
    "%reserved_smem_offset_cap", "%reserved_smem_offset_0", "%reserved_smem_offset_1",
    "%clusterid.x", "%clusterid.y", "%clusterid.z", "%nclusterid.x", "%nclusterid.y",
    "%nclusterid.z", "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
    "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%cluster_ctarank",
    "%cluster_nctarank", "%is_explicit_cluster", "%aggr_smem_size", "%clock_hi",
}
# Special registers read as 64 bits; the others, as 32.
_WIDE = ("%clock64", "%globaltimer", "%gridid")


# Special registers with no `ptx.sreg` case: reads of them import as the
# generic `ptx.inst` (operand kind "%name"), which lowering rejects.
OTHER_SPECIAL_REG = re.compile(
    r"%(?:envreg\d+|pm\d+(?:_64)?|current_graph_exec)")


def register_type(name: str) -> str:
    """The MLIR type special register `name` is read as."""
    if name == "%is_explicit_cluster":
        return "i1"
    return "i64" if name in _WIDE else "i32"
