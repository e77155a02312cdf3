"""Checking splits after the fact: duplicate audit, exposure per relation, the HTML report."""
