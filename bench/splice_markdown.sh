#!/usr/bin/env bash
# Replaces the generated part of a Markdown document: the lines from
# `<!-- MARKER:begin` to `<!-- MARKER:end -->` become the contents of MDFILE
# (which carries both markers itself); without the markers MDFILE is appended.
# Used by bench/figures.sh and bench/paper.sh, so hand-written text around the
# generated tables survives a regeneration.
#
#   bench/splice_markdown.sh docs/performance.md figures /tmp/tables.md
set -euo pipefail
doc=$1 marker=$2 md=$3
if grep -q "<!-- $marker:begin" "$doc"; then
  awk -v md="$md" -v begin="<!-- $marker:begin" -v end="<!-- $marker:end -->" '
    index($0, begin) == 1 { while ((getline line < md) > 0) print line; skip = 1; next }
    index($0, end) == 1 { skip = 0; next }
    !skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
else
  cat "$md" >>"$doc"
fi
