#!/usr/bin/env bash
# check-binary.sh BINARY GLIBC_FLOOR: BINARY needs nothing but glibc, and no
# glibc symbol version above GLIBC_FLOOR (make dist's promise). Reads the
# dynamic section and versioned symbols with objdump. Exit 77 (skipped) when
# BINARY does not exist, 1 with the offending libraries or symbols listed.
set -euo pipefail
bin=$1
floor=$2
if [ ! -e "$bin" ]; then
  echo "skipped: no $bin (make dist builds it)"
  exit 77
fi
status=0
# Libraries glibc itself is made of; anything else is a dependency the node may lack.
glibc_libs='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
echo "NEEDED: $(echo $needed)"
for lib in $needed; do
  if ! [[ $lib =~ $glibc_libs ]]; then
    echo "FAIL: $bin needs $lib, which is not part of glibc"
    status=1
  fi
done
symbols=$(objdump -T "$bin")
highest=$(grep -oE '\(GLIBC_[0-9.]+\)' <<<"$symbols" | tr -d '()' | sed 's/GLIBC_//' | sort -uV | tail -1)
echo "highest GLIBC symbol version: GLIBC_$highest (floor GLIBC_$floor)"
if [ "$(printf '%s\n%s\n' "$highest" "$floor" | sort -V | tail -1)" != "$floor" ]; then
  echo "FAIL: symbols newer than GLIBC_$floor:"
  grep -E '\(GLIBC_[0-9.]+\)' <<<"$symbols" | awk '{print $(NF-1), $NF}' | tr -d '()' | sed 's/GLIBC_//' |
    while read -r v s; do
      if [ "$(printf '%s\n%s\n' "$v" "$floor" | sort -V | tail -1)" != "$floor" ]; then echo "  $s@GLIBC_$v"; fi
    done
  status=1
fi
# libstdc++ and libgcc are linked in: none of their symbol versions may be imported.
runtime=$(grep -oE '\((GLIBCXX|CXXABI|GCC)_[0-9.]+\)' <<<"$symbols" | sort -u | tr '\n' ' ' || true)
if [ -n "$runtime" ]; then
  echo "FAIL: imports the GCC runtime: $runtime"
  status=1
fi
exit $status
