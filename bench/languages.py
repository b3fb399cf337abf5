#!/usr/bin/env python3
"""Per-language analysis against the English analyzer, on real text in other languages.

The corpora are Debian's translated manual pages (`manpages-de`, `manpages-fr`, `manpages-zh`:
German, French and Chinese). Each page is a document without its NAME section; its one-line
description there ("ls - Verzeichnisinhalte auflisten") is a known-item query whose answer is
the page. Each collection is indexed lexically twice, as its own language (`--language de`) and
as English, and `cairn eval` prints nDCG@10, MRR@10 and recall@100 of both.

Usage: python3 bench/languages.py [CAIRN] [WORK_DIR]
(apt-get install manpages-de manpages-fr manpages-zh; scripts/setup.sh does not.)
"""
import gzip, json, os, re, subprocess, sys
from pathlib import Path

CAIRN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/cairn"
WORK = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/cairn-languages")
# (language, man folder, NAME section headings)
LANGUAGES = [("de", "de", ("BEZEICHNUNG", "NAME")), ("fr", "fr", ("NOM", "NAME")), ("zh", "zh_CN", ("名称", "NAME"))]


def render(path):
    env = {**os.environ, "MANWIDTH": "1000", "LC_ALL": "C.UTF-8"}
    out = subprocess.run(["man", "-l", str(path)], capture_output=True, env=env, timeout=60)
    text = subprocess.run(["col", "-b"], input=out.stdout, capture_output=True).stdout
    return text.decode("utf-8", "replace")


def split(text, headings):
    """(description, body): the NAME section's description, and the page without that section."""
    lines = text.splitlines()[1:-1]  # the header and footer lines
    sections, current = [], None
    for line in lines:
        if line and not line[0].isspace():
            current = [line.strip(), []]
            sections.append(current)
        elif current:
            current[1].append(line.strip())
    name = next((s for s in sections if s[0] in headings), None)
    if not name:
        return None, None
    joined = " ".join(l for l in name[1] if l)
    match = re.match(r"^.*?\s[-—–]\s*(.+)$", joined)
    body = "\n".join(f"{h}\n" + "\n".join(ls) for h, ls in sections if h not in headings)
    return (match.group(1).strip() if match else None), body


def collection(lang, folder, headings):
    out = WORK / lang
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    docs, queries, qrels, seen = [], [], [], set()
    for page in sorted(Path("/usr/share/man", folder).glob("man*/*.gz")):
        description, body = split(render(page), headings)
        name = page.name.removesuffix(".gz")
        if not description or not body or len(body) < 200 or description in seen:
            continue
        seen.add(description)  # pages that share a description (aliases) are one query's twins
        docs.append({"_id": name, "title": name, "text": body})
        queries.append({"_id": f"q{len(queries)}", "text": description})
        qrels.append((queries[-1]["_id"], name))
    (out / "corpus.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    (out / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries))
    (out / "qrels/test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels))
    return out, len(docs)


def main():
    print(f"| collection | pages | analyzer | nDCG@10 | MRR@10 | recall@100 |\n|---|---|---|---|---|---|")
    for lang, folder, headings in LANGUAGES:
        out, n = collection(lang, folder, headings)
        for analyzer in (lang, "en"):
            index = out / f"index-{analyzer}"
            subprocess.run([CAIRN, "index", str(out / "corpus.jsonl"), "--no-embed", "--language", analyzer, "--layout", "single", "--out", str(index)], check=True, capture_output=True)
            report = subprocess.run([CAIRN, "eval", str(index), "--queries", str(out / "queries.jsonl"), "--qrels", str(out / "qrels/test.tsv"), "--mode", "lexical", "--json"], check=True, capture_output=True, text=True).stdout
            m = json.loads(report)
            print(f"| {lang} man pages | {n} | {analyzer} | {m['ndcgAt10']:.3f} | {m['mrrAt10']:.3f} | {m['recallAt100']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
