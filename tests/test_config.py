"""config.toml holds exactly the defaults; bad configs are refused by key."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from uci_driver import ENGINE_COMMAND

from blitzaco.config import Config, ConfigError, config_from_dict, dump_toml, load_config

#: The one source of the defaults, at the top of the repository.
SHIPPED = Path(__file__).parent.parent / "config.toml"


def test_shipped_config_is_exactly_the_defaults() -> None:
    assert load_config(SHIPPED) == Config()
    assert SHIPPED.read_text() == dump_toml(), "the shipped defaults are not in blitzaco config's layout"


def test_the_parsed_defaults_are_cached_like_bytecode(tmp_path: Path) -> None:
    """The shipped file's parse is kept (marshal) and keyed by the file's size and
    CRC-32: read back while the file is unchanged, parsed again when it changes or
    the copy is damaged, not written when told not to (no bytecode); the frozen
    build writes its copy with write_config_cache."""
    from blitzaco import config

    path = tmp_path / "config.toml"
    path.write_bytes(SHIPPED.read_bytes())
    cache = tmp_path / "__pycache__" / config.CONFIG_CACHE_NAME
    parsed = config._cached_parse(path, cache, write=False)
    assert not cache.exists()
    assert config._cached_parse(path, cache, write=True) == parsed and cache.is_file()
    copy = cache.read_bytes()
    assert config._cached_parse(path, cache, write=True) == parsed and cache.read_bytes() == copy
    assert config_from_dict(parsed) == Config()
    # The copy is what is read while the stamp matches (a planted one is returned
    # as it is), and ignored once the stamp does not match the file.
    import marshal

    stamp = config._stamp(path.read_bytes())
    cache.write_bytes(marshal.dumps((stamp, {"planted": 1})))
    assert config._cached_parse(path, cache, write=True) == {"planted": 1}
    cache.write_bytes(marshal.dumps(((stamp[0], stamp[1] ^ 1), {"planted": 1})))
    assert config._cached_parse(path, cache, write=True) == parsed
    assert cache.read_bytes() == copy  # renewed from the file

    window = Config().search.aspiration_window
    other = window + 1 if len(str(window + 1)) == len(str(window)) else window - 1  # the same size
    path.write_text(path.read_text().replace(f"\naspiration_window = {window}\n", f"\naspiration_window = {other}\n"))
    assert config._cached_parse(path, cache, write=False)["search"]["aspiration_window"] == other
    assert config._cached_parse(path, cache, write=True)["search"]["aspiration_window"] == other
    assert cache.read_bytes() != copy  # renewed
    cache.write_bytes(b"not marshal data")
    assert config._cached_parse(path, cache, write=True)["search"]["aspiration_window"] == other

    built = tmp_path / "frozen" / config.CONFIG_CACHE_NAME
    config.write_config_cache(SHIPPED, built)
    frozen = tmp_path / "frozen" / "config.toml"
    frozen.write_bytes(SHIPPED.read_bytes())
    assert config._cached_parse(frozen, built, write=False) == parsed


def test_config_command_prints_the_shipped_file() -> None:
    out = subprocess.run([*ENGINE_COMMAND, "config"], capture_output=True, text=True, check=True).stdout
    assert out == SHIPPED.read_text()


def _leaf_fields(obj: object, prefix: str = "") -> list[tuple[str, dataclasses.Field]]:
    leaves = []
    for field in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, field.name)
        name = f"{prefix}{field.name}"
        leaves += _leaf_fields(value, name + ".") if dataclasses.is_dataclass(value) else [(name, field)]
    return leaves


def test_every_key_is_in_the_shipped_file_and_documented() -> None:
    text = SHIPPED.read_text()
    for path, field in _leaf_fields(Config()):
        section, _, key = path.rpartition(".")
        assert f"[{section}]" in text, section
        assert f"\n{key} = " in text, path
        assert field.metadata.get("doc"), f"{path} has no documentation"


def test_partial_config_keeps_the_other_defaults() -> None:
    config = config_from_dict({"search": {"aspiration_window": 25}})
    assert config.search.aspiration_window == 25
    assert config.eval == Config().eval
    assert config.time == Config().time


def test_round_trip_of_a_changed_config(tmp_path: Path) -> None:
    changed = config_from_dict({"eval": {"material": {"knight": [300, 310]}}, "time": {"soft_factor": 0.5}})
    path = tmp_path / "c.toml"
    path.write_text(dump_toml(changed))
    assert load_config(path) == changed


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"serch": {}}, "serch"),
        ({"search": {"aspiration_widow": 3}}, "search.aspiration_widow"),
        ({"eval": {"material": {"king": [0, 0]}}}, "eval.material.king"),
        ({"eval": {"pst": {"pawn_mg": [0] * 64, "pawn_md": [0] * 64}}}, "eval.pst.pawn_md"),
    ],
)
def test_unknown_key_is_refused_by_name(data: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=f"unknown key '{key}'"):
        config_from_dict(data)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"search": {"aspiration_window": "40"}}, "search.aspiration_window"),
        ({"search": {"aspiration_window": 40.5}}, "search.aspiration_window"),
        ({"search": {"aspiration_window": True}}, "search.aspiration_window"),
        ({"time": {"soft_factor": "fast"}}, "time.soft_factor"),
        ({"time": {"soft_factor": False}}, "time.soft_factor"),
        ({"eval": {"material": {"pawn": 100}}}, "eval.material.pawn"),
        ({"eval": {"material": {"pawn": [100, 120, 3]}}}, "eval.material.pawn"),
        ({"eval": {"material": {"pawn": [100, 1.5]}}}, "eval.material.pawn"),
        ({"eval": {"pst": {"knight_eg": [0] * 63}}}, "eval.pst.knight_eg"),
        ({"eval": {"pst": {"knight_eg": [0] * 63 + ["x"]}}}, "eval.pst.knight_eg"),
        ({"eval": {"material": 5}}, "eval.material"),
        ({"search": {"aspiration_window": 0}}, "search.aspiration_window"),
        ({"time": {"max_share": 1.5}}, "time.max_share"),
    ],
)
def test_wrong_type_or_range_is_refused_by_name(data: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(data)
    assert str(err.value).startswith(key + ":"), str(err.value)


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[search\naspiration_window = 3\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().search.aspiration_window = 3  # type: ignore[misc]


def test_cli_refuses_a_bad_config(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[time]\nsoft_factr = 1.0\n")
    run = subprocess.run([*ENGINE_COMMAND, "--config", str(bad), "bench", "1"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "time.soft_factr" in run.stderr
