"""Passwords live in the system keyring only; without a keyring Versus says so and stores none."""
from __future__ import annotations

SERVICE = "versus"


class KeyringUnavailable(Exception):
    pass


def _backend():
    import keyring
    from keyring.backends import fail
    kr = keyring.get_keyring()
    if isinstance(kr, fail.Keyring) or "fail" in type(kr).__module__:
        raise KeyringUnavailable(
            "no system keyring is available, so Versus cannot store passwords; install and "
            "unlock a keyring (GNOME Keyring, KWallet, macOS Keychain) or set "
            "VERSUS_DB_PASSWORD for one run")
    return keyring


def keyring_status() -> tuple[bool, str]:
    try:
        kr = _backend().get_keyring()
    except KeyringUnavailable as exc:
        return False, str(exc)
    return True, f"passwords are kept in {type(kr).__name__}"


def set_secret(kind: str, name: str, value: str) -> None:
    _backend().set_password(SERVICE, f"{kind}:{name}", value)


def get_secret(kind: str, name: str) -> str | None:
    try:
        return _backend().get_password(SERVICE, f"{kind}:{name}")
    except KeyringUnavailable:
        return None


def delete_secret(kind: str, name: str) -> None:
    try:
        import keyring.errors
        _backend().delete_password(SERVICE, f"{kind}:{name}")
    except (KeyringUnavailable, Exception):
        pass
