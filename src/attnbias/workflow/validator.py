"""The JSON-schema validator of the config checks: whole floats (300.0) are not integers
here, since configcheck.validate coerces them first. A leaf, so that the config checks
(configcheck) and the sweeps' checks (attnbias.studies.sweep_check) share it without
importing each other."""

from __future__ import annotations

from functools import cache


@cache  # a class, built once: the sweeps' checks ask for it per grid value
def validator_class():
    """jsonschema's Draft 2020-12 validator with that integer type (imported on use)."""
    from jsonschema import Draft202012Validator, validators

    def is_integer(checker, instance):  # 300.0 is not an integer here (coerced first)
        return isinstance(instance, int) and not isinstance(instance, bool)

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)
