# SPDX-License-Identifier: GPL-2.0
# make deb: the Debian package (debian/), from dpkg-buildpackage -b in a copy of
# the tree as it stands (what git tracks or would track, uncommitted changes
# included), so that build/ and ./drainstat stay as they are for whoever runs
# tests from them (mk/copy-tree). The .deb, the -dbgsym .deb, the .buildinfo,
# the .changes and the build's log land in build/deb, the only part of build/
# this touches; the last line printed is the .deb's path. Tested by
# tests/deb/run. MAKEFLAGS stays out of the inner build: it would carry this
# make's variables and job server into the copy's make.
DEB_OUT := $(OUT)/deb

.PHONY: deb
deb:
	@set -e; \
	tmp=$$(mktemp -d); \
	trap 'rm -rf "$$tmp"' EXIT; \
	src=$$tmp/drainstat-$(VERSION); \
	mkdir "$$src"; \
	mk/copy-tree "$$src"; \
	rm -rf $(DEB_OUT); \
	mkdir -p $(DEB_OUT); \
	log=$(DEB_OUT)/drainstat_$(VERSION)_$$(dpkg --print-architecture).build; \
	echo "dpkg-buildpackage -b in $$src (log: $$log)"; \
	if ! (cd "$$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -b -us -uc -jauto) >"$$log" 2>&1; then \
		tail -n 40 "$$log"; \
		echo "make deb: dpkg-buildpackage failed; the whole log is $$log" >&2; \
		exit 1; \
	fi; \
	cp "$$tmp"/*.deb "$$tmp"/*.buildinfo "$$tmp"/*.changes $(DEB_OUT)/; \
	ls $(DEB_OUT)/drainstat_$(VERSION)_*.deb
