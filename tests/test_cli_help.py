"""``pycrawler crawl --help`` and ``demo --help`` state the defaults a crawl runs with: the values
of :class:`pycrawler.crawl.settings.CrawlConfig`, never a copy of them in the help text."""

import argparse
import dataclasses

import pytest

from pycrawler.cli import build_parser
from pycrawler.crawl.settings import CrawlConfig

DEFAULTS = {field.name: field.default for field in dataclasses.fields(CrawlConfig)}


def command(name: str) -> argparse.ArgumentParser:
    commands = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))
    return commands.choices[name]


def option(parser: argparse.ArgumentParser, name: str) -> tuple[object, str]:
    """The option's default and its help as ``--help`` prints it (on one line)."""
    action = next(action for action in parser._actions if name in action.option_strings)
    return action.default, " ".join((action.help % {"default": action.default}).split())


@pytest.mark.parametrize("name, field", [
    ("--concurrency", "concurrency"), ("--bloom-capacity", "bloom_capacity"), ("--min-free", "min_free_mb")])
def test_a_crawl_option_defaults_to_its_crawl_config_value_and_its_help_says_so(name, field):
    default, help_text = option(command("crawl"), name)
    assert default == DEFAULTS[field]
    assert f"(default {DEFAULTS[field]}" in help_text


def test_the_je_cache_a_crawl_falls_back_to_is_its_seen_tables_and_its_help_names_them():
    from pycrawler.crawl.settings import JE_CACHE_MB

    default, help_text = option(command("crawl"), "--je-cache-mb")
    assert default is None and DEFAULTS["je_cache_mb"] is None  # not given: the Visited table's
    assert f"(default: {JE_CACHE_MB['exact']} with --seen exact" in help_text
    assert f"else {JE_CACHE_MB['bloom']};" in help_text and JE_CACHE_MB["bloom"] == JE_CACHE_MB["drum"]


def test_the_depth_limit_a_crawl_falls_back_to_is_the_one_its_help_names():
    default, help_text = option(command("crawl"), "--max-depth")
    assert default is None  # not given: the state's limit, else CrawlConfig's
    assert f"(default {DEFAULTS['max_depth']}," in help_text


def test_the_demo_crawls_with_the_crawl_concurrency_its_help_names():
    default, help_text = option(command("demo"), "--concurrency")
    assert default == DEFAULTS["concurrency"]
    assert f"(default {DEFAULTS['concurrency']})" in help_text
