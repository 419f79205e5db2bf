"""Git without a git binary (DESIGN 7): dulwich for every clone, worktree, salvage,
bundle and import the hive makes. One concept per module:

- `repo`: open or clone `HIVE_REPO_URL`, refresh base (`open_checkout`, `resolve`)
- `worktrees`: cut, reuse, list, remove and prune `queen-<issue>` worktrees
- `status`: what a worktree holds that HEAD does not
- `salvage`: commit a turn's leftovers inside its boundary
- `commits`: a commit of what is staged, and a repository of one commit (no hook runs)
- `bundles`: the bundle of `base..queen-<issue>`
- `importing`: read a bundle into a checkout
- `listing`: the `queen-*` branches ahead of base
- `safety`: URLs, helper environments and boundary paths
- `merge`: merge a branch head into the base tip (fast-forward or three-way), no ref moved
- `textmerge`: the line-level three-way merge of one text file
- `push`: a new base tip to the remote, compare-and-swap on the old sha
- `scratch`: a commit's files in a fresh directory, for checks and reviews
"""
