# SPDX-License-Identifier: GPL-2.0
# Compares two of drainstat's Prometheus exports, the earlier one first:
#
#   awk -v site=generic_fadvise -f tests/soak/prom.awk PREV CUR
#
# Prints "violation WHAT" for every counter series of PREV (a *_total, or a
# histogram's _bucket, _count or _sum) that is lower or missing in CUR, and for
# every metric family of PREV missing in CUR; then "NAME VALUE" lines with the
# figures of CUR that the soak test follows (drains and works of SITE, the
# fadvise and loss counters). PREV may be /dev/null.

function series_name(key) {
	sub(/\{.*/, "", key)
	return key
}

function is_counter(name) {
	return name ~ /(_total|_bucket|_count|_sum)$/
}

# Every sample line: KEY VALUE, where KEY is the name with its labels.
function parse(line, parts,    n) {
	n = split(line, parts, " ")
	parts["key"] = substr(line, 1, length(line) - length(parts[n]) - 1)
	parts["value"] = parts[n]
}

# FILENAME, not FNR == NR: PREV may be empty.
FILENAME == ARGV[1] && /^# TYPE / { prev_family[$3] = 1; next }
FILENAME == ARGV[1] && !/^#/ && NF >= 2 {
	parse($0, p)
	if (is_counter(series_name(p["key"])))
		prev[p["key"]] = p["value"]
	next
}
FILENAME == ARGV[1] { next }

/^# TYPE / { family[$3] = 1; families++; next }
/^#/ || NF < 2 { next }
{
	parse($0, p)
	key = p["key"]
	v = p["value"] + 0
	cur[key] = p["value"]
	name = series_name(key)
	# SITE's figures summed over its cgroup labels (--by's default has one)
	skey = key
	sub(/,cgroup="([^"\\]|\\.)*"/, "", skey)
	if (name == "drainstat_drains_total") {
		drains += v
		if (skey == "drainstat_drains_total{site=\"" site "\"}")
			site_drains += v
	}
	if (skey == "drainstat_works_total{site=\"" site "\",kind=\"remote\"}")
		site_remote += v
	if (skey == "drainstat_works_total{site=\"" site "\",kind=\"self\"}")
		site_self += v
	if (skey == "drainstat_wait_seconds_count{site=\"" site "\"}")
		site_waits += v
	if (skey == "drainstat_dispatch_seconds_count{site=\"" site "\"}")
		site_dispatches += v
	if (key == "drainstat_fadvise_calls_total{advice=\"dontneed\"}")
		dontneed = v
	if (name == "drainstat_fadvise_escalations_total")
		escalations = v
	if (name == "drainstat_lost_events_total")
		lost += v
	if (key == "drainstat_inexact_events_total{reason=\"work_unseen\"}")
		work_unseen = v
	if (key == "drainstat_inexact_events_total{reason=\"wait_revised\"}")
		wait_revised = v
}

END {
	for (k in prev) {
		if (!(k in cur))
			printf "violation %s vanished (was %s)\n", k, prev[k]
		else if (cur[k] + 0 < prev[k] + 0)
			printf "violation %s went down: %s -> %s\n", k, prev[k], cur[k]
	}
	for (f in prev_family)
		if (!(f in family))
			printf "violation family %s vanished\n", f
	printf "families %.0f\n", families
	printf "drains %.0f\n", drains
	printf "site_drains %.0f\n", site_drains
	printf "site_remote %.0f\n", site_remote
	printf "site_self %.0f\n", site_self
	printf "site_waits %.0f\n", site_waits
	printf "site_dispatches %.0f\n", site_dispatches
	printf "dontneed %.0f\n", dontneed
	printf "escalations %.0f\n", escalations
	printf "lost %.0f\n", lost
	printf "work_unseen %.0f\n", work_unseen
	printf "wait_revised %.0f\n", wait_revised
}
