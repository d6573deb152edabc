"""Pure table geometry in inches: bases, distances, coherency, sight lines, paths, hexes.

Depends on numpy and shapely only; knows nothing about scenes, games, pixels or the web.
"""
