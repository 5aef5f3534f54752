# Sourced by the tests that need a fresh Debian machine: a minimal root of
# this machine's Debian release (debootstrap --variant=minbase), from the
# mirror this machine's apt uses, in memory, with /proc, /sys and /dev/shm,
# unmounted and removed on every exit. Needs root (debootstrap, chroot,
# mount) and the mirror: without either it fails and says so.
#   fresh_root_bootstrap SIZE   makes the root in $root (tmpfs of SIZE, e.g. 4g)
#   in_root SECONDS COMMAND...  COMMAND as root in the root, clean environment
# Sets: $work (a temporary directory), $root, $repos, $release, $arch.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] ||
  fail "needs root for debootstrap, chroot and mount (CI runs as root); run it as root," \
    "or leave the slow install tests out with ctest -LE slow"
for tool in debootstrap chroot mount umount apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/setup.sh installs it)"
done
. /etc/os-release
release=${VERSION_CODENAME:-}
arch=$(dpkg --print-architecture)
[ "${ID:-}" = debian ] && [ -n "$release" ] ||
  fail "this machine is not Debian (${PRETTY_NAME:-unknown}): the package is built for Debian"

# The repositories of this release that this machine's apt reads (sources.list
# and sources.list.d, either format): the main one for debootstrap, and it
# with -updates and -security for apt in the root.
repos=$(apt-get indextargets --no-release-info --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(ARCHITECTURE)' \
  'Created-By: Packages' | sort -u |
  awk -v r="$release" -v a="$arch" '$3 == "main" && $4 == a &&
    ($2 == r || $2 == r "-updates" || $2 == r "-security") { print $1, $2 }')
mirror=$(awk -v r="$release" '$2 == r { print $1; exit }' <<<"$repos")
[ -n "$mirror" ] ||
  fail "this machine's apt sources name no '$release main' repository for $arch to bootstrap from"

work=$(mktemp -d "${TMPDIR:-/tmp}/kcache-fresh-root-XXXXXX")
root=$work/root
# Mount points under the work directory, newest first: each is unmounted on
# every exit, and the directory is removed only when none is left. Each long
# step has a time limit well inside ctest's, so the test ends by itself and
# cleans up rather than being killed.
mounted=()
cleanup() {
  local rc=$? m
  for m in ${mounted[@]+"${mounted[@]}"}; do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
  if awk -v w="$work/" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "FAIL: still mounted under $work, left in place:" >&2
    grep -F " $work/" /proc/mounts >&2 || true
    rc=1
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
mount_in_root() { # FSTYPE SOURCE TARGET [OPTION]
  mkdir -p "$root$3"
  mount -t "$1" ${4:+-o "$4"} "$2" "$root$3"
  mounted=("$root$3" ${mounted[@]+"${mounted[@]}"})
}
started=$SECONDS
elapsed() { echo "$((SECONDS - started)) s"; }
# Node.js reads extra certificate authorities only from this variable: the
# root gets it when this machine has it, with the root's own bundle.
extra_ca=()
[ -z "${NODE_EXTRA_CA_CERTS:-}" ] || extra_ca=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
in_root() { # SECONDS COMMAND...: COMMAND as root in the root, with a clean environment
  timeout -k 10 "$1" chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
    DEBIAN_FRONTEND=noninteractive ${extra_ca[@]+"${extra_ca[@]}"} "${@:2}"
}

# The root lives in memory: unpacking is quicker there, and unmounting it
# leaves nothing behind. This machine's downloaded packages are lent to
# debootstrap and apt as their cache (/var/cache/apt/archives): the root
# still gets every package installed anew, only not downloaded twice. The
# minimal root itself is bootstrapped once a day per release and kept as a
# tarball (in $KCACHE_FRESH_ROOT_CACHE, default /var/tmp/kcache-fresh-root):
# each test unpacks the same untouched root that debootstrap made.
fresh_root_bootstrap() { # SIZE
  local debs=/var/cache/apt/archives
  local cache=${KCACHE_FRESH_ROOT_CACHE:-/var/tmp/kcache-fresh-root}
  local tarball=$cache/$release-$arch-minbase.tar
  mount_in_root tmpfs tmpfs / "size=$1,mode=0755"
  mkdir -p "$cache"
  exec {lock}>"$cache/lock"
  flock "$lock"
  if [ -n "$(find "$tarball" -mmin -1440 2>/dev/null)" ]; then
    tar -xpf "$tarball" -C "$root" || fail "cannot unpack the minimal root $tarball"
    echo "minimal root of $release unpacked from $tarball (bootstrapped $(date -r "$tarball" '+%F %R'))"
  else
    echo "debootstrap --variant=minbase $release from $mirror"
    timeout -k 10 400 debootstrap --variant=minbase --arch="$arch" --cache-dir="$debs" "$release" "$root" \
      "$mirror" >"$work/debootstrap.log" 2>&1 ||
      { tail -n 20 "$work/debootstrap.log"; fail "debootstrap of $release from $mirror failed (is the mirror reachable?)"; }
    tar -cpf "$tarball.new" -C "$root" . && mv "$tarball.new" "$tarball" || rm -f "$tarball.new"
    echo "root bootstrapped in $(elapsed)"
  fi
  flock -u "$lock"
  # This machine's network trust: the local certificate authorities it adds
  # to Debian's (a proxy's, say), which a new user's machine on this network
  # has too; ca-certificates in the root takes them in when it is installed.
  if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
  fi
  awk '{ print "deb", $1, $2, "main" }' <<<"$repos" >"$root/etc/apt/sources.list"
  mount_in_root proc proc /proc
  mount_in_root sysfs sysfs /sys ro
  mount_in_root tmpfs tmpfs /dev/shm mode=1777
  mkdir -p "$root$debs"
  mount --bind "$debs" "$root$debs"
  mounted=("$root$debs" "${mounted[@]}")
  in_root 120 apt-get update -qq >"$work/apt-update.log" 2>&1 ||
    { cat "$work/apt-update.log"; fail "apt-get update in the root failed"; }
}
