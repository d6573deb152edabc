"""Game rules on top of scenes and geometry: rulings with reasons, scores, odds.

Imports geometry/ and tablesight.scene only; never cv2, torch or the web stack.
"""
