#!/usr/bin/env python3
"""Renders a `tmux capture-pane -e -p` capture (text with SGR colour escapes) to a PNG, colours kept.
Usage: render_ansi.py CAPTURE.ans OUT.png COLUMNS ROWS"""
import re, sys
from PIL import Image, ImageDraw, ImageFont
from wcwidth import wcwidth

BASE = [(0x1e, 0x1e, 0x1e), (0xcd, 0x31, 0x31), (0x0d, 0xbc, 0x79), (0xe5, 0xe5, 0x10), (0x24, 0x72, 0xc8), (0xbc, 0x3f, 0xbc),
        (0x11, 0xa8, 0xcd), (0xe5, 0xe5, 0xe5), (0x66, 0x66, 0x66), (0xf1, 0x4c, 0x4c), (0x23, 0xd1, 0x8b), (0xf5, 0xf5, 0x43),
        (0x3b, 0x8e, 0xea), (0xd6, 0x70, 0xd6), (0x29, 0xb8, 0xdb), (0xff, 0xff, 0xff)]
FG, BG = (0xd4, 0xd4, 0xd4), (0x1e, 0x1e, 0x1e)

def palette(n):
    if n < 16: return BASE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)

def fonts():
    mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
    bold = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
    cjk = None
    for path in ["/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc"]:
        try:
            cjk = ImageFont.truetype(path, 15); break
        except OSError: pass
    return ImageFont.truetype(mono, 15), ImageFont.truetype(bold, 15), cjk

def main():
    src, out, cols, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    text = open(src, encoding="utf-8", errors="replace").read()
    cw, ch = 9, 19
    img = Image.new("RGB", (cols * cw + 16, rows * ch + 16), BG)
    draw = ImageDraw.Draw(img)
    regular, bold, cjk = fonts()
    for y, line in enumerate(text.split("\n")[:rows]):
        fg, bg, b, rev, dim, ul = None, None, False, False, False, False
        x = 0
        i = 0
        while i < len(line):
            m = re.match(r"\x1b\[([0-9;:]*)m", line[i:])
            if m:
                params = [int(p) if p else 0 for p in re.split("[;:]", m.group(1))] or [0]
                j = 0
                while j < len(params):
                    p = params[j]
                    if p == 0: fg, bg, b, rev, dim, ul = None, None, False, False, False, False
                    elif p == 1: b = True
                    elif p == 2: dim = True
                    elif p == 4: ul = True
                    elif p == 7: rev = True
                    elif p == 22: b = dim = False
                    elif p == 24: ul = False
                    elif p == 27: rev = False
                    elif 30 <= p <= 37: fg = palette(p - 30)
                    elif 90 <= p <= 97: fg = palette(p - 90 + 8)
                    elif p == 39: fg = None
                    elif 40 <= p <= 47: bg = palette(p - 40)
                    elif 100 <= p <= 107: bg = palette(p - 100 + 8)
                    elif p == 49: bg = None
                    elif p in (38, 48) and j + 2 < len(params) and params[j + 1] == 5:
                        if p == 38: fg = palette(params[j + 2])
                        else: bg = palette(params[j + 2])
                        j += 2
                    j += 1
                i += m.end()
                continue
            if line[i] == "\x1b":
                m = re.match(r"\x1b\[[0-9;?]*[A-Za-z]", line[i:])
                i += m.end() if m else 1
                continue
            c = line[i]
            i += 1
            w = wcwidth(c)
            if w < 0: continue
            if w == 0:
                continue
            f, k = (fg or FG), (bg or BG)
            if rev: f, k = k, f
            if dim: f = tuple(int(v * 0.6 + k[n] * 0.4) for n, v in enumerate(f))
            px, py = 8 + x * cw, 8 + y * ch
            draw.rectangle([px, py, px + cw * w - 1, py + ch - 1], fill=k)
            font = bold if b else regular
            if cjk is not None and w == 2: font = cjk
            draw.text((px, py + 1), c, font=font, fill=f)
            if ul: draw.line([px, py + ch - 2, px + cw * w - 1, py + ch - 2], fill=f)
            x += w
    img.save(out)

main()
