"""Who may write which model names: a Hub identity and the namespaces it owns.

A board name is `<namespace>/<name>`; a submission is stored only when the namespace is
the signed-in Hub user or an organization the user belongs to. The identity comes from
the Hub, never from a text box: the Space's `gr.LoginButton` session (`gr.OAuthProfile`,
orgs from the profile or from `whoami` with the session's token), or a Hub token a
client hands over (`hardneg submit` sends the user's token as Gradio's `oauth_token`,
which the Space checks with `whoami`). Names of the board's own rows (baselines and
the papers' reported rows) are reserved for everyone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from hardneg.leaderboard.baselines import BLIND_MODEL

#: a Hub user or organization name
_HUB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,95}$")

#: the access token of Gradio's local sign-in mock (outside a Space): not a Hub token, never sent to the Hub
GRADIO_LOCAL_MOCK_TOKEN = "mock-oauth-token-for-local-dev"

#: the namespace every local identity may write (`--model-id local/<name>`), and what its rows are labelled
LOCAL_NAMESPACE = "local"

#: `whoami(token) -> dict` as `huggingface_hub.whoami` returns it (`name`, `type`, `orgs: [{name}]`)
Whoami = Callable[[str], Mapping[str, Any]]


class IdentityError(ValueError):
    """No usable identity: not signed in, or the token was refused by the Hub."""


@dataclass(frozen=True)
class Identity:
    """A verified Hub user and the organizations they belong to."""

    username: str
    orgs: tuple[str, ...] = field(default_factory=tuple)
    #: a board's local mode (`hardneg leaderboard serve`, `hardneg submit` into a folder): no Hub behind the name;
    #: its rows are shown as "local" and it may also write the `local/` namespace
    local: bool = False

    def __post_init__(self):
        if not _HUB_NAME.match(self.username or ""):
            raise IdentityError(f"{self.username!r:.80} is not a Hub user name")
        object.__setattr__(self, "orgs", tuple(sorted({o for o in self.orgs if o and _HUB_NAME.match(o)})))

    @property
    def namespaces(self) -> tuple[str, ...]:
        return (self.username, *self.orgs, *((LOCAL_NAMESPACE,) if self.local else ()))

    def may_write(self, model_id: str) -> bool:
        """True when `model_id` is `<namespace>/<name>` in one of this identity's namespaces (case-insensitive,
        as the Hub treats names)."""
        ns, sep, name = model_id.partition("/")
        return bool(sep and name) and ns.lower() in {n.lower() for n in self.namespaces}


def as_identity(who: "Identity | str") -> Identity:
    """An Identity as is; a plain name (a local board's operator, tests) as a user with no orgs."""
    return who if isinstance(who, Identity) else Identity((who or "").strip())


def local_identity(name: str | None = None) -> Identity:
    """The identity of a local board: `name` (default: the OS user), marked local. No Hub, no sign-in: used only
    where the board is not public (`hardneg leaderboard serve`, a store folder of one's own)."""
    import getpass

    if not name:
        try:
            name = getpass.getuser()
        except Exception:  # no user name in the environment (some containers)
            name = "local-user"
    clean = re.sub(r"[^A-Za-z0-9._\-]", "-", name.strip())[:96].strip("-._") or "local-user"
    return Identity(clean, (), local=True)


def reserved_names() -> set[str]:
    """Lower-cased names a submission may not take: every baseline and reported row of the board."""
    from hardneg import benchmarks

    names = {"random", "random (exact chance)", "chance", "human", "baseline", BLIND_MODEL,
             f"text-only ({BLIND_MODEL})", "text-only", "blind"}
    for bench in benchmarks.all_benchmarks().values():
        names |= {r.model for r in bench.reported}
    return {n.strip().lower() for n in names}


def reserved_conflict(model_id: str, reserved: Iterable[str] | None = None) -> str | None:
    """The reserved name `model_id` would pass for (whole id or the part after the namespace), or None."""
    names = reserved_names() if reserved is None else {n.lower() for n in reserved}
    whole = model_id.strip().lower()
    bare = whole.rsplit("/", 1)[-1]
    for candidate in (whole, bare):
        if candidate in names:
            return candidate
    return None


def _org_names(entries: Any) -> list[str]:
    """Org handles from OAuth userinfo (`preferred_username`) or whoami (`name`) entries."""
    out = []
    for o in entries or []:
        if isinstance(o, Mapping):
            name = o.get("preferred_username") or o.get("name")
            if isinstance(name, str):
                out.append(name)
    return out


def hub_whoami(token: str) -> Mapping[str, Any]:
    """`huggingface_hub.whoami` with this token (a network call to the Hub)."""
    from huggingface_hub import HfApi

    return HfApi().whoami(token=token)


def identity_from_token(token: str, whoami: Whoami = hub_whoami) -> Identity:
    """The user a Hub token belongs to, with their orgs; IdentityError when the Hub refuses it."""
    if not token or not isinstance(token, str):
        raise IdentityError("no Hub token")
    try:
        info = whoami(token)
    except Exception as exc:  # HTTP 401, network errors: the token is not usable
        raise IdentityError(f"the Hub did not accept the token ({type(exc).__name__})") from None
    if not isinstance(info, Mapping) or info.get("type", "user") != "user" or not isinstance(info.get("name"), str):
        raise IdentityError("the token does not belong to a Hub user account; use a personal access token")
    return Identity(info["name"], tuple(_org_names(info.get("orgs"))))


def identity_from_oauth(profile: Mapping[str, Any] | None, token: Any = None, whoami: Whoami = hub_whoami) -> Identity:
    """The identity of a Space request: the signed-in profile (orgs from the profile, else from `whoami` with the
    session token), or, without a session, a token passed to the endpoint (checked with `whoami`).

    `profile`: `gr.OAuthProfile | None` (a dict); `token`: `gr.OAuthToken | None` or a token string.
    """
    raw = getattr(token, "token", token)
    raw = raw if isinstance(raw, str) and raw else None
    if profile is not None:
        username = profile.get("preferred_username") or getattr(profile, "username", None)
        if not isinstance(username, str):
            raise IdentityError("the sign-in session has no user name; sign in again")
        orgs = _org_names(profile.get("orgs"))
        if "orgs" not in profile and raw and raw != GRADIO_LOCAL_MOCK_TOKEN:
            try:
                same = identity_from_token(raw, whoami)
                orgs = list(same.orgs) if same.username.lower() == username.lower() else []
            except IdentityError:  # e.g. Gradio's local mock token: the user alone
                orgs = []
        return Identity(username, tuple(orgs))
    if raw:
        return identity_from_token(raw, whoami)
    raise IdentityError("not signed in")
