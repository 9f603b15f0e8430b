"""Passwords live in the system keyring only; without one Versus says so and stores none.

The `keyring` library takes whatever backend ranks highest, and on a machine without a
desktop keyring that can be a plain-text file (keyrings.alt's PlaintextKeyring, base64 at
best) or a backend that stores nothing. Those are refused with a sentence: never read from,
never written to.
"""
from __future__ import annotations

SERVICE = "versus"
_FIX = ("install and unlock a system keyring (GNOME Keyring or KWallet through Secret "
        "Service, the macOS Keychain, the Windows Credential Manager), or set "
        "VERSUS_DB_PASSWORD for one run")


class KeyringUnavailable(Exception):
    pass


def refusal(kr) -> str | None:
    """Why a keyring backend is not a system keyring (None when it is one)."""
    mod, cls = type(kr).__module__, type(kr).__name__
    if mod.startswith("keyrings.alt") or "plaintext" in cls.lower():
        where = getattr(kr, "file_path", None)
        return (f"the keyring found keeps passwords in a file{f' ({where})' if where else ''} "
                f"that anyone who can read it can decode ({mod}.{cls}), not in a system "
                f"keyring, so Versus stores no password there; uninstall keyrings.alt or unset "
                f"PYTHON_KEYRING_BACKEND, and " + _FIX)
    if mod.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return "no system keyring is available, so Versus cannot store passwords; " + _FIX
    return None


def _backend():
    """The system keyring backend (from a chain: the first real one); KeyringUnavailable
    with the sentence otherwise."""
    import keyring
    try:
        kr = keyring.get_keyring()
    except (ImportError, AttributeError) as exc:    # PYTHON_KEYRING_BACKEND names no backend
        raise KeyringUnavailable(f"the keyring backend set in PYTHON_KEYRING_BACKEND cannot "
                                 f"be loaded ({exc}), so Versus cannot store passwords; unset "
                                 f"it, or " + _FIX) from None
    chain = getattr(kr, "backends", None)
    if chain is not None and "chainer" in type(kr).__module__:
        good = [b for b in chain if refusal(b) is None]
        if good:
            return good[0]
        if not chain:
            raise KeyringUnavailable(
                "no system keyring is available, so Versus cannot store passwords; " + _FIX)
        kr = chain[0]
    why = refusal(kr)
    if why:
        raise KeyringUnavailable(why)
    return kr


def keyring_status() -> tuple[bool, str]:
    try:
        kr = _backend()
    except KeyringUnavailable as exc:
        return False, str(exc)
    return True, f"passwords are kept in {keyring_name(kr)}"


def keyring_name(kr) -> str:
    """Where a keyring backend keeps passwords, in words a user knows (not a class name)."""
    mod, cls = type(kr).__module__.lower(), type(kr).__name__
    path = getattr(kr, "file_path", None)
    if path:
        return f"an encrypted file, {path}"
    if "secretservice" in mod or "libsecret" in mod:
        return "the desktop keyring (GNOME Keyring or KWallet, through Secret Service)"
    if "kwallet" in mod:
        return "KWallet"
    if "macos" in mod or "osx" in mod:
        return "the macOS Keychain"
    if "windows" in mod:
        return "the Windows Credential Manager"
    return f"the {cls} keyring"


def set_secret(kind: str, name: str, value: str) -> None:
    _backend().set_password(SERVICE, f"{kind}:{name}", value)


def get_secret(kind: str, name: str) -> str | None:
    try:
        return _backend().get_password(SERVICE, f"{kind}:{name}")
    except KeyringUnavailable:
        return None


def delete_secret(kind: str, name: str) -> None:
    try:
        _backend().delete_password(SERVICE, f"{kind}:{name}")
    except (KeyringUnavailable, Exception):
        pass
