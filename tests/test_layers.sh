#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The layers of user/ (docs/design.md §7), checked on every #include:
#   core     -> bpf headers only
#   format   -> core
#   analysis -> core (never libbpf, a skeleton, or render)
#   render   -> core, analysis (never libbpf, a skeleton, or another
#               renderer: a module includes only its own header of render/)
#   record   -> core, libbpf, skeletons (never format: cmd/ joins them)
#   cmd      -> anything in user/
#   nothing in user/ -> tools/; ttfile_codec.h only from format/
# and: no source file directly in user/, none over MAX_LINES lines, and
# every "docs/design.md §N" citation in the tree names a section that
# exists. Prints PASS:/FAIL: lines.
cd "$(dirname "$0")/.." || exit 1
MAX_LINES=${MAX_LINES:-1000}
layers="core format analysis render record cmd"
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# the layer a header belongs to: user/<layer>/, bpf, skel, libbpf, tools
layer_of() {
	local h=$1 l
	case "$h" in
	*.skel.h) echo skel; return ;;
	bpf/*) echo libbpf; return ;;
	*tools/*) echo tools; return ;;
	esac
	for l in $layers; do
		[ -f "user/$l/$h" ] && { echo "$l"; return; }
	done
	[ -f "bpf/$h" ] && { echo bpfhdr; return; }
	for d in tools tools/*/; do [ -f "$d/$h" ] && { echo tools; return; }; done
	echo system
}

allowed() { # FROM_LAYER TO_LAYER
	case "$1:$2" in
	*:system | *:bpfhdr | cmd:*) return 0 ;;
	*:tools) return 1 ;;
	core:core) return 0 ;;
	format:core | format:format) return 0 ;;
	analysis:core | analysis:analysis) return 0 ;;
	render:core | render:analysis | render:render) return 0 ;;
	record:core | record:record | record:libbpf | record:skel) return 0 ;;
	esac
	return 1
}

checked=0
for l in $layers; do
	for f in user/"$l"/*.[ch]; do
		[ -f "$f" ] || continue
		base=$(basename "$f")
		base=${base%.[ch]}
		while IFS= read -r inc; do
			to=$(layer_of "$inc")
			checked=$((checked + 1))
			if ! allowed "$l" "$to"; then
				fail "layers: $f includes $inc ($l -> $to)"
			elif [ "$inc" = ttfile_codec.h ] && [ "$l" != format ]; then
				fail "layers: $f includes $inc (the codec is private to format/)"
			elif [ "$l:$to" = render:render ] &&
				[ "${inc%.h}" != "$base" ]; then
				fail "layers: $f includes $inc (a renderer includes another)"
			fi
		done < <(sed -n 's/^#include [<"]\([^">]*\)[">].*/\1/p' "$f")
	done
done
[ "$fails" = 0 ] && echo "PASS: layers: $checked includes in user/ follow the layer rules"

stray=$(find user -maxdepth 1 -name '*.[ch]' | tr '\n' ' ')
if [ -n "$stray" ]; then
	fail "layers: files directly in user/, in no layer: $stray"
else
	echo "PASS: layers: every source file of user/ is in a layer folder"
fi

big=$(find user -name '*.[ch]' -exec wc -l {} + | awk -v m="$MAX_LINES" '$2 != "total" && $1 > m { print $2 " (" $1 ")" }' | tr '\n' ' ')
if [ -n "$big" ]; then
	fail "layers: files over $MAX_LINES lines: $big"
else
	echo "PASS: layers: no file of user/ over $MAX_LINES lines"
fi

# the design document's sections: "## N." and "### N.M" headings
sections=$(sed -n 's/^##* \([0-9][0-9.]*\) .*/\1/p' docs/design.md | sed 's/\.$//' | tr '\n' ' ')
before=$fails
cited=0
while IFS=: read -r file ref; do
	cited=$((cited + 1))
	ref=${ref%.}
	case " $sections " in
	*" $ref "*) ;;
	*) fail "design citations: $file cites docs/design.md §$ref, which has no such section (sections: $sections)" ;;
	esac
done < <(git ls-files -co --exclude-standard -- user bpf tests tools bench Makefile README.md |
	grep -v '^tests/test_layers.sh$' |
	xargs grep -o 'docs/design\.md §[0-9][0-9.]*' 2>/dev/null |
	sed 's/:docs\/design\.md §/:/')
old=$(git ls-files -co --exclude-standard -- user bpf tests tools bench Makefile |
	grep -v '^tests/test_layers.sh$' | xargs grep -l 'DESIGN §\|DESIGN section' 2>/dev/null | tr '\n' ' ')
if [ -n "$old" ]; then
	fail "design citations: old DESIGN citations (no such document in the repository) in: $old"
elif [ "$cited" -gt 0 ] && [ "$fails" = "$before" ]; then
	echo "PASS: design citations: $cited citations of docs/design.md name sections that exist"
elif [ "$cited" = 0 ]; then
	fail "design citations: none found (the check found no files?)"
fi
[ "$fails" = 0 ]
