"""Git without a git binary (DESIGN 7): dulwich for every clone, worktree, salvage,
bundle and import the hive makes. One concept per module:

- `repo`: open or clone `HIVE_REPO_URL`, refresh base (`open_checkout`, `resolve`),
  deepen a shallow clone (`deepen_base`)
- `local`: a repository on this machine cloned by linking its packs, its branch read
- `fetching`: one branch fetched, its pack written to disk as it comes (shallow or not)
- `packindex`: a received pack indexed and moved in, as `git index-pack` does
- `packindexer`: a pack's entries read, their deltas resolved, for `packindex`
- `packfiles`: the pack and index file formats
- `native`: whether dulwich runs on its compiled extensions
- `checkout`: a tree's files written into an empty directory, with their index entries
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
- `treechange`: the change between two trees, which a kept tree (`kept`) writes
"""
