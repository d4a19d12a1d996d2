"""Where the board may trust "Sign in with Hugging Face": the start-up decision of the Space app.

Gradio 6.31 (`gradio/oauth.py`, `attach_oauth`) uses real Hugging Face OAuth only when `gradio.utils.get_space()`
is set (SYSTEM=spaces and SPACE_ID); anywhere else `/login/huggingface` is a MOCK that signs any visitor in as
the owner of the machine's HF_TOKEN. Its session cookies are signed with sha256(OAUTH_CLIENT_SECRET + "-v4"),
which, without a client secret, is a key anyone can compute, so a forged cookie names anyone. The board
therefore accepts submissions through sign-in only in these modes:

* ``oauth``: a Space with OAuth configured (SYSTEM=spaces, SPACE_ID, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET,
  OAUTH_SCOPES and OPENID_PROVIDER_URL: what a Space with `hf_oauth: true` gets), or an operator's own OAuth app
  outside a Space: HARDNEG_OAUTH_CLIENT_ID and HARDNEG_OAUTH_CLIENT_SECRET (at least 32 characters: Gradio
  derives the session-signing key from it, so it is also the session secret), optional HARDNEG_OAUTH_SCOPES
  (default "openid profile") and HARDNEG_OAUTH_PROVIDER (default https://huggingface.co). `apply_operator_oauth`
  maps these onto Gradio's variables before Gradio is imported.
* ``local``: `hardneg leaderboard serve` (HARDNEG_LB_LOCAL_AS=NAME): one fixed identity, no sign-in at all, shown
  as "local"; refused where the board would be public (SPACE_ID set).
* ``read-only``: anywhere else. The board is shown; every submission is refused, and start-up says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from hardneg.leaderboard.identity import Identity, local_identity

LOCAL_ENV = "HARDNEG_LB_LOCAL_AS"
OPERATOR_ENV = ("HARDNEG_OAUTH_CLIENT_ID", "HARDNEG_OAUTH_CLIENT_SECRET")
SPACE_OAUTH_ENV = ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL")
MIN_SECRET = 32


class LocalModeRefused(RuntimeError):
    """Local identity mode was asked for where the board would be public."""


@dataclass(frozen=True)
class SignIn:
    mode: str  # "oauth" | "local" | "read-only"
    reason: str
    local: Identity | None = None

    @property
    def accepts(self) -> bool:
        return self.mode in ("oauth", "local")

    def banner(self) -> str:
        if self.mode == "local":
            return (f"LOCAL MODE: no sign-in; every submission is stored as {self.local.username!r} and shown as "
                    f"'local' ({self.reason}). Never expose this board publicly.")
        if self.mode == "oauth":
            return f"sign-in: Hugging Face OAuth ({self.reason})"
        return f"READ-ONLY: submissions are refused ({self.reason})"


def refuse_local_if_public(environ: Mapping[str, str] = os.environ) -> None:
    if environ.get("SPACE_ID"):
        raise LocalModeRefused(
            f"local identity mode is for a board on your own machine, but SPACE_ID={environ['SPACE_ID'][:80]!r} is "
            "set: this board would be public, and anyone could submit under the local name. On a Space, sign-in "
            "comes from Hugging Face OAuth (`hf_oauth: true` in the Space card); unset SPACE_ID to run locally")


def sign_in_from_env(environ: Mapping[str, str] = os.environ) -> SignIn:
    """The mode this process may run the board in (see the module docstring). Raises LocalModeRefused."""
    name = environ.get(LOCAL_ENV)
    if name is not None:
        refuse_local_if_public(environ)
        return SignIn("local", f"{LOCAL_ENV} is set", local_identity(name or None))
    on_space = environ.get("SYSTEM") == "spaces" and bool(environ.get("SPACE_ID"))
    if on_space and all(environ.get(k) for k in SPACE_OAUTH_ENV):
        return SignIn("oauth", f"Space {environ['SPACE_ID'][:80]} with OAuth")
    if all(environ.get(k) for k in OPERATOR_ENV):
        if len(environ["HARDNEG_OAUTH_CLIENT_SECRET"]) < MIN_SECRET:
            return SignIn("read-only", f"HARDNEG_OAUTH_CLIENT_SECRET is shorter than {MIN_SECRET} characters")
        if not (on_space and environ.get("OAUTH_CLIENT_SECRET") == environ["HARDNEG_OAUTH_CLIENT_SECRET"]):
            return SignIn("read-only", "the operator OAuth app was not applied before Gradio started "
                                       "(call hardneg.leaderboard.signin.apply_operator_oauth first)")
        return SignIn("oauth", "the operator's own OAuth app (HARDNEG_OAUTH_CLIENT_ID)")
    if on_space:
        return SignIn("read-only", "this Space has no OAuth configured: add `hf_oauth: true` to its card")
    return SignIn("read-only", "not on a Hugging Face Space and no operator OAuth app (HARDNEG_OAUTH_CLIENT_ID, "
                               "HARDNEG_OAUTH_CLIENT_SECRET); Gradio's sign-in here is a mock. Run "
                               "`hardneg leaderboard serve` for a local board you can submit to")


def apply_operator_oauth(environ=os.environ) -> bool:
    """Map HARDNEG_OAUTH_* onto what Gradio reads (at import) so its real OAuth routes and a private session key
    are used. Call before `import gradio`. True when applied."""
    if not all(environ.get(k) for k in OPERATOR_ENV) or len(environ["HARDNEG_OAUTH_CLIENT_SECRET"]) < MIN_SECRET:
        return False
    environ["OAUTH_CLIENT_ID"] = environ["HARDNEG_OAUTH_CLIENT_ID"]
    environ["OAUTH_CLIENT_SECRET"] = environ["HARDNEG_OAUTH_CLIENT_SECRET"]
    environ["OAUTH_SCOPES"] = environ.get("HARDNEG_OAUTH_SCOPES", "openid profile")
    environ["OPENID_PROVIDER_URL"] = environ.get("HARDNEG_OAUTH_PROVIDER", "https://huggingface.co")
    environ["SYSTEM"] = "spaces"
    environ.setdefault("SPACE_ID", "operator/hardneg-leaderboard")
    return True


__all__ = ["LOCAL_ENV", "LocalModeRefused", "SignIn", "apply_operator_oauth", "refuse_local_if_public",
           "sign_in_from_env"]
