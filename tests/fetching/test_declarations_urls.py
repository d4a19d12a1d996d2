"""A release file's URL is derived from its source's repo, commit and path (the path is written once)."""
import pytest

from hardneg.benchmarks.base import ReleaseFile, Source

SHA = "0" * 64
C1, C2 = "1" * 40, "2" * 40


def test_the_url_is_the_raw_host_at_the_source_commit_or_the_files_own():
    src = Source(repo="github.com/owner/name", commit=C1, license="x",
                 files=(ReleaseFile("data/a.json", 3, SHA), ReleaseFile("b.csv", 3, SHA, commit=C2)), videos=None)
    assert [f.url for f in src.files] == [f"https://raw.githubusercontent.com/owner/name/{C1}/data/a.json",
                                          f"https://raw.githubusercontent.com/owner/name/{C2}/b.csv"]


def test_an_lfs_file_is_read_from_the_media_host_and_a_given_url_is_kept():
    src = Source(repo="github.com/owner/name", commit=C1, license="x",
                 files=(ReleaseFile("big.json", 3, SHA, lfs=True),
                        ReleaseFile("c.json", 3, SHA, url="https://example.org/c.json")), videos=None)
    assert [f.url for f in src.files] == [f"https://media.githubusercontent.com/media/owner/name/{C1}/big.json",
                                          "https://example.org/c.json"]


def test_a_repo_that_is_not_on_github_must_give_its_urls():
    with pytest.raises(ValueError, match="give 'a.json' a url="):
        Source(repo="gitlab.com/owner/name", commit=C1, license="x", files=(ReleaseFile("a.json", 3, SHA),),
               videos=None)
