#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The man page against the code: it lints clean, and it lists exactly the long
# options --help prints, every exit code of src/cli.h, every counter the
# report can print and every family the exporter writes. The README's example
# report and the families it names, against the code too.
set -u
. tests/host/lib.sh

MAN=man/drainstat.8

# The page as a reader sees it: plain text, no overstrike.
render() {
	mandoc -T ascii "$MAN" | col -bx
}

# The lines of one section of the rendered page (its title excluded).
section() {
	render | awk -v s="$1" '$0 == s { f = 1; next } f && /^[A-Z][A-Z ]*$/ { exit } f'
}

# Words in $1 missing from $2 (both one per line), as one space-separated line.
missing() {
	comm -23 <(sort -u <<<"$1") <(sort -u <<<"$2") | tr '\n' ' ' | sed 's/ $//'
}

# expect_none NAME LIST: PASS when LIST (from missing) is empty.
expect_none() {
	if [ -z "$2" ]; then pass "$1"; else fail "$1" "$2"; fi
}

if ! command -v mandoc >/dev/null; then
	fail "man page" "mandoc is not installed (apt-get install mandoc)"
	exit 0
fi
if [ ! -f "$MAN" ]; then
	fail "man page" "no $MAN"
	exit 0
fi

lint=$(mandoc -T lint -W warning "$MAN" 2>&1)
lint_rc=$?
if [ $lint_rc -eq 0 ] && [ -z "$lint" ]; then
	pass "mandoc -T lint -W warning is clean"
else
	fail "mandoc -T lint -W warning is clean" "exit $lint_rc: $(head -n 3 <<<"$lint" | tr '\n' ' ')"
fi

for s in NAME SYNOPSIS DESCRIPTION MODES OPTIONS OUTPUT SIGNALS FILES "EXIT STATUS" \
	EXAMPLES "SEE ALSO" "SECURITY CONSIDERATIONS"; do
	check "section $s" grep -qx "$s" <(render)
done

# Long options: those --help prints, and those the page mentions, are the same.
help_opts=$("$DRAINSTAT" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u)
man_opts=$(render | grep -oE -- '--[a-z][a-z-]*' | sort -u)
check "--help lists long options" test -n "$help_opts"
expect_none "every option of --help is in the man page" "$(missing "$help_opts" "$man_opts")"
expect_none "every option of the man page is in --help" "$(missing "$man_opts" "$help_opts")"

# Exit codes: the enum of src/cli.h and the tags of EXIT STATUS are the same.
enum_codes=$(sed -n '/^enum exit_code/,/^};/p' src/cli.h | grep -oE '=[[:space:]]*[0-9]+' |
	tr -dc '0-9\n')
man_codes=$(section "EXIT STATUS" | grep -oE '^ {5}[0-9]+( |$)' | tr -d ' ')
check "src/cli.h has exit codes" test -n "$enum_codes"
expect_none "every exit code of src/cli.h is in EXIT STATUS" "$(missing "$enum_codes" "$man_codes")"
expect_none "every code in EXIT STATUS is in src/cli.h" "$(missing "$man_codes" "$enum_codes")"

# Counters: every name the report can print after "lost" or "note" is explained.
counters=$(grep -oE '\[CNT_[A-Z_]+\][[:space:]]*=[[:space:]]*\{[[:space:]]*"[a-z_]+"' src/model.c |
	grep -oE '"[a-z_]+"' | tr -d '"')
check "src/model.c names counters" test -n "$counters"
expect_none "every counter is in OUTPUT" \
	"$(missing "$counters" "$(section OUTPUT | grep -oE '[a-z_]+')")"

# Export families: those the exporter writes (its goldens: every mode's and
# every feature's families, tests/unit/test_report_prom.c) and those the page
# names are the same.
written=$(cat tests/golden/*.prom | awk '$1 == "#" && $2 == "TYPE" { print $3 }' | sort -u)
named=$(render | grep -oE 'drainstat_[a-z_]+' | grep -v '^drainstat_fexit_' | sort -u)
check "the exporter's goldens have families" test -n "$written"
expect_none "every family the exporter writes is in the man page" "$(missing "$written" "$named")"
expect_none "every family of the man page is one the exporter writes" "$(missing "$named" "$written")"

# The README names a few families, and its example report shows the text
# report's tables: those families are written, those column titles printed
# (the text report's goldens, tests/unit/test_report.c, from src/metric.c and
# src/report_text.c's column tables).
titles() {
	grep -hE '^ *(SITE|LOCAL|FADVISE|CPU) +[A-Z]' "$@" | tr -s ' ' '\n' | sed '/^$/d'
	grep -ohE -- '-+ [A-Z][A-Z ~]*[A-Z~] -+' "$@"
}
readme_families=$(grep -oE 'drainstat_[a-z_]+' README | sort -u)
expect_none "every family the README names is one the exporter writes" \
	"$(missing "$readme_families" "$written")"
readme_titles=$(titles README | sort -u)
printed=$(titles tests/golden/*.txt | sort -u)
check "the README's example has column titles" test -n "$readme_titles"
expect_none "every column title of the README's example is one the text report prints" \
	"$(missing "$readme_titles" "$printed")"

exit 0
