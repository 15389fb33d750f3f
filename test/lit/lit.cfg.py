# Lit configuration for zmlir: the tools come from the project's venv
# (zmlir, zmlir-opt) and LLVM 22 (FileCheck, not), found under
# $ZMLIR_LLVM_ROOT (zmlir/toolchain.py).
import os
import shutil

import lit.formats
import lit.llvm

from zmlir.toolchain import llvm_bin

config.name = "zmlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".ptx"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]

repo = os.path.dirname(os.path.dirname(config.test_source_root))
# Test outputs go to the build tree, not next to the sources.
config.test_exec_root = os.path.join(repo, "build", "lit")
tool_dirs = [os.path.join(repo, ".venv", "bin"), str(llvm_bin())]
config.environment["PATH"] = os.pathsep.join([*tool_dirs, os.environ.get("PATH", "")])

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config  # noqa: E402  (set by initialize)

llvm_config.with_system_environment(["HOME", "TMPDIR", "XDG_CACHE_HOME"])
config.llvm_tools_dir = str(llvm_bin())
llvm_config.use_default_substitutions()
search_dirs = tool_dirs + os.environ.get("PATH", "").split(os.pathsep)
llvm_config.add_tool_substitutions(["zmlir-opt", "zmlir", "FileCheck", "not", "spirv-val", "spirv-dis",
                                    "llvm-readelf", "ptxas"], search_dirs)
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
