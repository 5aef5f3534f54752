# Sourced by the install tests' scripts (bash, set -euo pipefail). Not
# executable on its own.

# check_installed_pack KCACHE PACK_DIR BUILD: the pack that BUILD (its
# CMakeCache.txt) installs into PACK_DIR, read with the CLI KCACHE. With
# KCACHE_AOT_PACK on it must be there and hold entries; with KCACHE_PACK_IL
# on too, one SPIR-V entry for every variant it holds a native binary of;
# with KCACHE_PACK_IL off, none. Without the pack option: nothing installed.
check_installed_pack() {
  local kcache=$1 pack_dir=$2 build=$3 aot il pack
  aot=$(sed -n 's/^KCACHE_AOT_PACK:BOOL=//p' "$build/CMakeCache.txt")
  il=$(sed -n 's/^KCACHE_PACK_IL:BOOL=//p' "$build/CMakeCache.txt")
  pack=$pack_dir/kcache-listed-igpus.kcpack
  if [ "$aot" != ON ]; then
    [ ! -e "$pack" ] || { echo "a pack is installed without KCACHE_AOT_PACK: $pack"; return 1; }
    echo "installed pack: none (KCACHE_AOT_PACK is off)"
    return 0
  fi
  [ -f "$pack" ] || { echo "KCACHE_AOT_PACK is on but $pack is not installed"; return 1; }
  "$kcache" ls --pack "$pack" --json | python3 -c '
import json, sys
entries = json.load(sys.stdin)
il = sys.argv[1] == "ON"
def kind(e):
    return "spirv" if e["fields"]["target_format"].startswith("spirv:") else "native"
names = {"spirv": [], "native": []}
for e in entries:
    names[kind(e)].append(e["fields"]["kernel_name"])
spirv, native = names["spirv"], set(names["native"])
print(f"installed pack: {len(entries)} entries, {len(native)} variants with native binaries, "
      f"{len(spirv)} SPIR-V entries (KCACHE_PACK_IL {sys.argv[1]})")
assert native, "the pack holds no native binary"
if il:
    assert len(spirv) == len(set(spirv)), "a variant has two SPIR-V entries"
    missing = sorted(native - set(spirv))
    assert not missing, f"variants without a SPIR-V entry: {missing}"
else:
    assert not spirv, f"SPIR-V entries without KCACHE_PACK_IL: {spirv}"
' "$il"
}
