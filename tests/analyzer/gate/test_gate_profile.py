"""The gate profile is a typed record decoded from its TOML: every table has its defaults, and
a misspelt key, an unknown table or a value of the wrong type is refused naming the file and
the dotted field (it was ignored, or read with an inline default, or failed later)."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pytest

from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.gate import BUILTIN_PROFILES, load_profile
from groundtrace.analyzer.gate._bayes import BayesSettings, StratumThresholds
from groundtrace.analyzer.gate._profile import GuardrailsTable, JudgeTable, ProfileSettings
from groundtrace.analyzer.judge._types import DEFAULT_THRESHOLD

#: The built-in profiles' SHA-256 (the snapshot names them: they do not change by decoding).
SHIPPED = {
    "balanced_default": "0f108590eb1fa63915278d0d18d3fed0d3ba18eb2ca27510a751f7ffe4de89ad",
    "decision_grade": "f3612968847baf6b06d794f7372035a831359077b7d6a4f2db460df94a2167e1",
}


def _profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "orchard.toml"
    path.write_text('[profile]\nname = "orchard"\n' + text, encoding="utf-8")
    return path


def test_the_built_in_profiles_keep_their_hashes_and_decode_every_table() -> None:
    assert set(BUILTIN_PROFILES) == set(SHIPPED)
    for name, sha in SHIPPED.items():
        profile = load_profile(name)
        shipped = resources.files("groundtrace.analyzer.gate").joinpath("profiles", f"{name}.toml")
        assert profile.sha256 == hashlib.sha256(shipped.read_bytes()).hexdigest() == sha
        settings = profile.settings
        assert settings.profile.name == profile.name == name and profile.version == "1"
        assert settings.judge.modes == {"adherence": "block", "context_relevance": "observe",
                                        "answer_relevance": "review"}  # fmt: skip
        assert settings.guardrails.actions == {"link_validity": "warn"}
        assert (settings.checks.f1_threshold, settings.coverage.min_evaluable) == (0.8, 0.9)
        assert settings.paths.critical is False and profile.paths_critical is False
        assert profile.bayes.strata["critical"].tau_block == 0.95


def test_an_absent_table_or_key_is_its_default(tmp_path: Path) -> None:
    profile = load_profile(_profile(tmp_path, "[bayes.strata.frost]\ndelta = 0.1\n"))
    assert profile.settings == ProfileSettings(profile=profile.settings.profile,
                                               bayes=profile.settings.bayes)  # fmt: skip
    assert profile.settings.bayes.strata == {"frost": StratumThresholds(delta=0.1)}
    assert profile.settings.judge == JudgeTable(modes={"adherence": "review"})
    assert profile.settings.judge.threshold == DEFAULT_THRESHOLD  # the judge's own default
    assert profile.settings.guardrails == GuardrailsTable()
    assert (profile.version, profile.min_evaluable, profile.paths_critical) == ("0", 0.9, False)
    assert profile.bayes.strata["frost"].tau_block == 0.8


def test_the_bayes_table_is_the_comparisons_settings_record_declared_once(tmp_path: Path) -> None:
    """``[bayes]`` decodes into the record ``compare`` reads (its fields and defaults once)."""
    import msgspec

    fields = msgspec.structs.fields(ProfileSettings)
    assert next(f for f in fields if f.name == "bayes").type is BayesSettings
    profile = load_profile(_profile(tmp_path, "[bayes]\nsamples = 500\nweights = { a = 2.0 }\n"))
    assert profile.bayes is profile.settings.bayes
    assert profile.bayes == BayesSettings(samples=500, weights={"a": 2.0})
    with pytest.raises(ConfigError) as refused:  # a misspelt stratum key is still refused
        load_profile(_profile(tmp_path, "[bayes.strata.frost]\ntau_blok = 0.9\n"))
    assert refused.value.field == "bayes.strata[...].tau_blok"  # as msgspec locates it


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("[checks]\nf1_treshold = 0.5\n", "checks.f1_treshold"),
        ("[coverage]\nmin_evaluable = true\n", "coverage.min_evaluable"),
        ("[judge]\nmodes = { adherence = \"blocks\" }\n", "judge.modes"),
        ("[guardrails.actions]\nlink_validity = \"shout\"\n", "guardrails.actions"),
        ("[bayes.strata.frost]\ntau_blok = 0.9\n", "bayes.strata[...].tau_blok"),
        ("[synonyms]\ngroups = \"frost, ice\"\n", "synonyms.groups"),
        ("[orchard]\nrows = 3\n", "orchard"),
    ],
    ids=["misspelt key", "wrong type", "judge mode", "guardrail action", "stratum key",
         "synonym groups", "unknown table"],
)  # fmt: skip
def test_a_bad_setting_is_refused_naming_the_file_and_field(
    tmp_path: Path, text: str, field: str
) -> None:
    path = _profile(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert raised.value.path == str(path)
    assert raised.value.field is not None and raised.value.field.startswith(field)


def test_a_profile_without_its_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nameless.toml"
    path.write_text("[bayes]\ndelta = 0.05\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_profile(path)
    assert (raised.value.path, raised.value.field) == (str(path), "profile")


def test_the_raw_data_is_still_read_with_a_warning(tmp_path: Path) -> None:
    profile = load_profile(_profile(tmp_path, "[checks]\nf1_threshold = 0.6\n"))
    with pytest.warns(DeprecationWarning, match="Profile.settings"):
        data = profile.data
    assert (
        data["checks"]
        == {"f1_threshold": 0.6}
        == {"f1_threshold": profile.settings.checks.f1_threshold}
    )
