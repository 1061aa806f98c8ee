"""§20B attribution: who said it and with what authority decides whether a mined item is written and how.

- the user's fact, decision or correction → a directive-level write (the kind's §6.1 starting state);
- the user's question or hypothetical → nothing;
- an assistant suggestion the user accepts in a following turn → a directive-level write with dual provenance
  (the assistant's message and the user's acceptance);
- an assistant suggestion the user lets stand (the next user turn neither accepts, contests nor rejects it)
  → written at ``suggested`` only, as an observation;
- contested → no write; rejected → no write, the rejected option is recorded (``mining_rejected_options``).
Silence is never acceptance: only words of acceptance in the user's own following turn count (I21)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from kenning.intake.extractors import Observation
from kenning.intake.mining.common import Span

Authority = Literal["directive", "recommendation", "observation"]

_QUESTION_START = re.compile(
    r"^\s*(?:(?:who|what|when|where|why|how|which)\s+(?:is|are|was|were|do|does|did|should|would|could|can|will|"
    r"shall|has|have|about)\b|(?:should|shall|could|would|can|do|does|did|is|are|was|were|will|have|has)\s+"
    r"(?:i|you|we|it|they|he|she|there|this|that|my)\b|any\s+idea|i\s+wonder)", re.I)
_HYPOTHETICAL = re.compile(
    r"\b(?:what\s+if|suppose\b|supposing|hypothetically|imagine|if\s+i\s+(?:were|was|had|ever)|say\s+i\b|"
    r"in\s+theory|would\s+it\s+make\s+sense|i\s+might|maybe\s+i(?:'ll|\s+will|\s+should)?|i'?m\s+wondering|"
    r"thinking\s+about\s+whether|not\s+sure\s+(?:if|whether))", re.I)

_SUGGESTION = re.compile(
    r"\b(?:i\s+(?:suggest|recommend|propose)|you\s+(?:could|might|should|may\s+want\s+to)|how\s+about|"
    r"why\s+not|consider|try\b|one\s+option|here'?s\s+(?:a|one|how)|a\s+good\s+(?:approach|way)|"
    r"i'?d\s+(?:suggest|recommend)|from\s+now\s+on|(?:one|an?|another)\s+(?:approach|idea|option|method|trick)\b|"
    r"two\s+options|want\s+me\s+to|shall\s+i|should\s+i|would\s+you\s+like\s+me\s+to|i\s+could\b|i\s+can\b|"
    r"my\s+suggestion|suggestion\s*:|a\s+good\s+(?:process|routine|system|plan|habit)|i'?ll\s+always|going\s+forward|whenever|every\s+\w+day|steps?\b|"
    r"\b1[.)]\s|"
    r"a\s+(?:quick|simple|good|easy|better)\s+(?:way|approach|method|routine)|(?:maybe\s+)?a\s+rule\s+like)", re.I)


_CORRECTION = re.compile(
    r"^\s*(?:(?:oh|oops|sorry|wait|hmm)[,.!\s]+)*(?:actually\b|no,?\s+i\s+meant\b|i\s+meant\b|correction\s*:|"
    r"scratch\s+that\b|i\s+was\s+wrong\b|let\s+me\s+correct\b|to\s+correct\s+myself\b|i\s+misspoke\b|"
    r"sorry,?\s+(?:i\s+meant|it'?s|that\s+should\s+be)\b)", re.I)


def is_correction(text: str) -> bool:
    """§10.5: the user correcting what was said ("actually …", "no, I meant …"); goes on the critical lane."""
    return bool(_CORRECTION.search(text or ""))


def is_question(text: str) -> bool:
    t = text.strip()
    return t.endswith("?") or bool(_QUESTION_START.match(t))


def is_hypothetical(text: str) -> bool:
    return bool(_HYPOTHETICAL.search(text))


def user_statement_kind(sentence: str) -> str:
    """'question' | 'hypothetical' | 'statement' for one user sentence (§20B: only statements are written)."""
    if is_question(sentence):
        return "question"
    if is_hypothetical(sentence):
        return "hypothetical"
    return "statement"


Reaction = Literal["accepted", "rejected", "contested", "uncontested"]

# Round 5 (I140–I143): a reply is read by its structure, not by whole phrases — a short affirmative or negative
# head (after an interjection or thanks), a reference to the suggestion ("that works for me", "I'll give it a go"),
# a choice of one option by ordinal, an acceptance with a tweak ("yes but make it Tuesday"), a refusal by reason
# ("too much hassle", "I'll stick with what I have"), a deferral ("maybe later": nothing written), and a topic
# shift after which the rest of the turn is no answer ("ok. different question: …" only acknowledges).
_EMOJI_YES = "👍👌✅🙌💯🔥😍🤝✔"
_INTERJ = r"(?:hmm+|hm+|eh+|um+|uh+|err*|ugh+|meh|mm+|oof|well|honestly|ah+|oh+|haha|lol|sorry|tbh|thanks|thank\s+you|thx|ty|ok(?:ay)?)"
_TOPIC_SHIFT = re.compile(
    r"\s(?:by\s+the\s+way|btw)\b|(?:^|[.!?,;:—–-]\s*)(?:(?:a\s+)?different\s+(?:question|topic|thing)|another\s+(?:question|thing)|unrelated|"
    r"anyway|by\s+the\s+way|btw|on\s+another\s+note|changing\s+the\s+subject|new\s+topic|separately|also|now,?\s+"
    r"about|speaking\s+of|oh,?\s+and|random\s+(?:question|thought))\b", re.I)
# words that acknowledge without agreeing: alone they accept nothing ("Thanks." — I140)
_ACK_ONLY = re.compile(r"^\s*(?:(?:thanks|thank\s+you|thx|ty|cheers|right|noted|got\s+it|i\s+see|interesting|hm+|ah+|"
                       r"oh+)[\s,.!…]*)+$", re.I)
# "ok thanks", "cool, got it": a weak yes with thanks only acknowledges (I140); a bare "ok" still accepts (I21)
_WEAK_ACK = re.compile(r"^\s*(?:(?:ok(?:ay)?|k|kk|cool|alright|all\s+right|nice|thanks|thank\s+you|thx|ty|cheers|right|"
                       r"noted|got\s+it|i\s+see)[\s,.!…]*)+$", re.I)
_ACK_WORD = re.compile(r"\b(?:thanks|thank\s+you|thx|ty|cheers|right|noted|got\s+it|i\s+see)\b", re.I)
_BARE_ACK = re.compile(r"^\s*(?:(?:ok(?:ay)?|k|kk|right|cool|got\s+it|noted|i\s+see|alright|all\s+right|thanks|"
                       r"thank\s+you|thx|ty|interesting|hm+|hmm+|ah+|oh+)[\s,.!…]*)+$", re.I)
_NO_NOT_NEG = r"\s+(?:problem|worries|doubt|question|rush|pressure|objections?|complaints|harm|idea)\b"
# choosing something else instead turns the suggestion down ("I'd rather do it on Sundays instead", I141)
_INSTEAD = re.compile(r"\b(?:i'?d\s+rather|i'?ll|let'?s|i\s+prefer\s+to)\s+(?!not\b).{3,80}?\binstead\b", re.I)
_NEG_HEAD = re.compile(
    rf"^\s*(?:{_INTERJ}[\s,.!…—–-]+)*(?:no\b(?!\s*,?\s*i\s+meant|{_NO_NOT_NEG})|nope|nah|naw|not\s+really|definitely\s+not|absolutely"
    rf"\s+not|certainly\s+not|no\s+way|not\s+interested|not\s+(?:necessary|needed|keen|a\s+chance|this\s+time)|"
    rf"(?:i'?d\s+)?rather\s+not|neither|none\s+of\s+(?:them|those|these)|no\s+thanks|no\s+thank\s+you|pass\b|i'?ll\s+pass|hard\s+pass|not\s+for\s+me|"
    rf"but\s+no\s+thanks|i'?m\s+good,?\s+(?:thanks|thank\s+you|ty)|too\s+(?:expensive|pricey|much|complicated|"
    rf"fiddly|long|slow|risky|many|faffy|involved|hard)|sounds\s+like\s+(?:too\s+much|a\s+lot\s+of)\s+(?:work|hassle|"
    rf"effort)|i'?d\s+pass|(?:just\s+)?forget\s+(?:it|that|about\s+it)|never\s*mind|scrap\s+(?:that|it)|"
    rf"(?:i'?ll\s+|i'?d\s+)?give\s+(?:it|that|this)(?:\s+one)?\s+a\s+miss)\b", re.I)
_REJECT = re.compile(
    rf"^\s*(?:no\b(?!\s*,?\s*i\s+meant|{_NO_NOT_NEG})|nope|nah|not\s+really)\b"
    r"|\b(?:let'?s\s+not|i'?d\s+rather\s+not|i\s+don'?t\s+(?:like|want|think\s+so)|(?:that|it|this)\s+won'?t\s+work|"
    r"i\s+won'?t\s+(?:do|use)\s+(?:that|this|it)|i'?ll\s+pass|skip\s+(?:that|it|this)|not\s+(?:a\s+fan|for\s+me)|"
    r"(?<!not a )bad\s+idea|don'?t\s+do\s+that|please\s+don'?t|i\s+reject|not\s+a\s+good\s+fit|doesn'?t\s+(?:work|suit)\s+"
    r"(?:for\s+)?me|no\s+thanks|"
    # round 5 (I141): refusals by reason or by keeping one's own way
    r"(?:that'?s|it'?s|this\s+is)\s+not\s+going\s+to\s+work|(?:that|it|this)\s+(?:wouldn'?t|won'?t|isn'?t\s+going\s+to)"
    r"\s+work|not\s+(?:really\s+)?my\s+(?:style|thing|cup\s+of\s+tea|kind\s+of\s+thing)|i'?ll\s+stick\s+(?:with|to)|"
    r"i'?d\s+(?:rather|prefer\s+to)\s+(?:stick|keep)|i'?d\s+prefer\s+(?:my\s+own|to\s+do\s+it\s+my)|(?:my|our)\s+own\s+way|"
    r"i'?ll\s+keep\s+doing\s+(?:it|what)|(?:way\s+)?too\s+much\s+(?:hassle|effort|work|faff)|leave\s+it\s+as\s+it\s+is|"
    r"thanks,?\s+but\s+no|i\s+don'?t\s+think\s+(?:that|it|this)(?:'?ll|\s+will|\s+would)?\s+work|"
    r"i'?m\s+not\s+(?:interested|going\s+to\s+(?:do|use|try)|gonna\s+(?:do|use|try))|i\s+won'?t\s+(?:try|bother)|"
    r"(?:that'?s|it'?s)\s+a\s+no\b|a\s+no\s+from\s+me|i'?ll\s+keep\s+(?:my|to\s+my|doing)|"
    r"(?:that'?s|it'?s|this\s+is|(?:sounds|seems|looks))\s+(?:way\s+|a\s+bit\s+|far\s+|much\s+)?"
    r"(?:too\s+(?:expensive|pricey|much|complicated|fiddly|long|slow|risky|hard|involved)|awful|terrible|horrible|"
    r"exhausting|overkill|like\s+overkill|a\s+bit\s+much)|i\s+don'?t\s+(?:love|fancy|need)\s+(?:it|that|this)|"
    r"don'?t\s+bother|(?:i'?ll|let'?s)\s+leave\s+it|"
    # a negated act ("don't set that up"), doing it oneself, being fine without it (I141)
    r"^\s*(?:please\s+)?(?:don'?t|do\s+not)\s+(?:do|set|add|use|make|bother|create|change|send|schedule|remind|save|"
    r"start|go)\b|(?:i'?ll|i\s+will|i'?d\s+rather)\s+do\s+it\s+(?:myself|on\s+my\s+own|manually|by\s+hand|my\s+(?:own\s+)?way)|"
    r"(?:^|\bbut\s+)i'?m\s+(?:fine|ok(?:ay)?|good|alright|all\s+right)(?:\s+without\s+(?:it|that|this)|\s+as\s+(?:i\s+am|is)|"
    r",?\s+(?:thanks|thank\s+you)|\s*[.!]?\s*$)|i'?d\s+rather\s+you\s+didn'?t|i'?d\s+prefer\s+(?:it\s+)?if\s+you\s+didn'?t|"
    r"(?:that'?s|it'?s)\s+not\s+(?:what\s+i\s+(?:want|need|asked\s+for)|really\s+me\b|me\b)|say\s+no\b|"
    r"i'?m\s+not\s+(?:keen|sold|a\s+fan|into\s+(?:it|that|this))|wouldn'?t\s+work|won'?t\s+work|"
    r"i\s+(?:hate|dislike|can'?t\s+stand)\s+(?:that|it|this))", re.I)
_DEFER = re.compile(
    r"^\s*(?:{0}[\s,.!…—–-]+)*(?:(?:maybe|perhaps)\s+(?:later|another\s+time|some\s+other\s+time|next\s+\w+)|not\s+(?:now|yet|right\s+"
    r"now|today|at\s+the\s+moment)|i'?ll\s+(?:think\s+about|consider|mull\s+over|sleep\s+on)\s+it|let\s+me\s+(?:think|"
    r"sleep\s+on\s+it|get\s+back\s+to\s+you)|another\s+time|some\s+other\s+time|i'?ll\s+get\s+back\s+to\s+you|"
    r"possibly|we'?ll\s+see)\b".format(_INTERJ), re.I)
_CONTEST = re.compile(
    r"\b(?:are\s+you\s+sure|i'?m\s+not\s+sure|not\s+convinced|hmm+|but\s+(?:what|why|how|wouldn'?t|isn'?t|"
    r"doesn'?t)|i\s+doubt|that\s+seems\s+(?:wrong|off|risky)|why\s+would|maybe\s+not|"
    r"not\s+sure\s+(?:that|about|it|this|if|whether))\b", re.I)
# an affirmative head; several may follow each other ("ok cool, yes please")
_YES_WORD = (r"(?:ok(?:ay)?|k|kk|yes(?:\s+please)?|yep|yup|yeah|ya|yas|sure(?:\s+thing)?|great|perfect|excellent|awesome|"
             r"brilliant|fantastic|lovely|wonderful|cool|nice|neat|alright|all\s+right|absolutely|definitely|"
             r"certainly|of\s+course|totally|exactly|sounds\s+(?:good|great|perfect|fine|lovely|like\s+a\s+plan)|"
             r"good\s+idea|great\s+idea|nice\s+idea|love\s+(?:it|that|this)|i\s+love\s+(?:it|that|this)|"
             r"i\s+like\s+(?:it|that|this)|agreed|good\s+call|nice\s+one|good\s+one|(?:that\s+|it\s+)?makes\s+(?:total\s+)?sense|"
             r"that'?s\s+(?:exactly\s+)?what\s+i\s+(?:needed|wanted|was\s+(?:looking|hoping)\s+for)|that'?s\s+right|"
             r"that'?ll\s+work|that\s+(?:will|should)\s+work|(?:that|it|this)\s+sounds\s+(?:good|great|perfect|fine|"
             r"lovely|ideal)|deal|done|that\s+works(?:\s+for\s+me)?|works\s+for\s+me|"
             r"fine\s+by\s+me|fine\s+with\s+me|go\s+for\s+it|why\s+not|i'?m\s+in|count\s+me\s+in|sold|do\s+it|"
             r"thanks|thank\s+you|thx|ty|that'?s\s+(?:perfect|great|brilliant|ideal|exactly\s+(?:it|right)|"
             r"(?:a\s+)?(?:great|good|nice|solid)\s+(?:plan|idea|one))|makes\s+sense|fair\s+enough|happy\s+with\s+that|"
             r"let'?s\s+do\s+(?:exactly\s+|just\s+)?(?:it|that|this)|please\s+do(?:\s+(?:that|it|this|so))?|go\s+ahead(?:\s+with\s+(?:it|that|this))?|do\s+so|"
             r"i'?m\s+(?:good|fine|happy|ok(?:ay)?|cool)\s+with\s+(?:that|it|this)|both(?:\s+of\s+them)?|(?:let'?s\s+do\s+)?all\s+of\s+(?:them|it)|"
             r"(?:that\s+|it\s+|this\s+)?sounds\s+like\s+a\s+(?:good\s+|great\s+|solid\s+|smart\s+)?(?:plan|idea)|genius|"
             r"smart|clever|spot\s+on|that'?s\s+(?:genius|smart|clever|spot\s+on)|"
             # round 6 (I150): a "no" or "not" inside an acceptance
             r"no\s+(?:problem|worries|doubt|objections?|complaints)(?:\s+(?:here|at\s+all|from\s+me))?|by\s+all\s+means|"
             r"(?:i\s+)?(?:don'?t|can'?t)\s+see\s+why\s+not|can'?t\s+argue\s+with\s+(?:that|it|this)|"
             r"nothing\s+to\s+lose|not\s+a\s+bad\s+idea|(?:i\s+)?couldn'?t\s+agree\s+more|can'?t\s+wait)")
_EXCLAIM = re.compile(r"^\s*(?:(?:o+h+|a+h+|wow|haha+|hah|heh|ooh+)[\s,!.…—–-]+)*", re.I)
_YES_HEADS = re.compile(rf"^\s*(?:(?:{_YES_WORD})\b[\s,!.…—–-]*|[{_EMOJI_YES}]\s*[\s,!.…—–-]*)+", re.I)
# what may follow the heads and keep it an acceptance: doing it, a tweak, thanks, an emoji
_YES_TAIL = re.compile(
    r"^(?:(?:let'?s|i'?ll|we'?ll|i\s+will|i'?m\s+going\s+to|gonna|go\s+ahead|please|do\s+(?:that|it|this)|use\s+that|"
    r"set\s+(?:that|it|this)\s+up|add\s+(?:that|it|this)|doing\s+it|adding\s+it|try(?:ing)?\s+(?:it|that|this)|"
    r"give\s+it\s+a\s+(?:go|try|shot)|add(?:ing)?\s+(?:that|it|this)|remember\s+(?:that|it|this)|"
    r"but\s+(?:on|at|in|every|only|with|without|from|after|before|earlier|later|shorter|longer|maybe\s+on|make|change|do|use|keep|move|set|switch|put|send|start|skip\s+step)|"
    r"just\s+(?:make|change|move|use)|and\s+(?:make|change|move))\b.*"
    rf"|(?:thanks|thank\s+you|cheers)\b.*|[{_EMOJI_YES}\s!.]*)$", re.I | re.S)
_ACCEPT = re.compile(
    r"\b(?:let'?s\s+(?:do|go\s+with|use|try)\s+(?:that|this|it|those|your)|i'?ll\s+(?:use|take|go\s+with|"
    r"follow|adopt|try)\s+(?:that|this|it|those|your)|go\s+with\s+(?:that|this|your)|that'?s\s+(?:exactly\s+)?what\s+"
    r"i(?:'ll|\s+will)\s+do|i'?ll\s+do\s+(?:that|it|exactly\s+that)|make\s+(?:that|it)\s+a\s+rule|"
    r"adopt(?:ing)?\s+(?:that|this|it)|can'?t\s+wait\s+to\s+(?:try|start|use|do|get|give|set)|"
    r"wouldn'?t\s+mind\s+(?:trying|doing|giving|using|setting)|rather\s+do\s+(?:that|this|it)\s+than|"
    # round 5 (I140): a reference to the suggestion with doing it
    r"(?:that|this|it)\s+works\s+for\s+me|i'?ll\s+give\s+(?:it|that|this)\s+a\s+(?:go|try|shot)|let'?s\s+give\s+(?:it|"
    r"that|this)\s+a\s+(?:go|try|shot)|let'?s\s+try\s+it|(?:set|sort)\s+(?:that|it|this)\s+up|i'?ll\s+try\s+(?:that|this|"
    r"it)|go\s+with\s+your\s+(?:version|suggestion|idea|plan)|sounds\s+(?:good|great|perfect),?\s+(?:do|let'?s|go)\b)\b",
    re.I)
# choosing one option by ordinal or number (I142): "go with option 2", "I'll take the second one", "option 1 please"
_ORD = {"first": 1, "1st": 1, "one": 1, "second": 2, "2nd": 2, "two": 2, "third": 3, "3rd": 3, "three": 3,
        "fourth": 4, "4th": 4, "four": 4}
_CHOICE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|yes|yeah|yep|no|nah|hmm+|i\s+think|let'?s\s+see|actually)[\s,.!]+)*(?:(?:let'?s|i'?ll|we'?ll|i'?d\s+like\s+to|"
    r"i\s+want\s+to)\s+)?(?:(?:go\s+(?:with|for)|take|pick|choose|try|do|have|use)\s+)?(?:the\s+)?"
    r"(?:option\s+(?:#\s*)?(?P<n>[1-4]|one|two|three|four|[a-d]\b)|#\s*(?P<h>[1-4])|number\s+(?P<m>[1-4]|one|two|three|four)|"
    r"(?P<o>first|second|third|fourth|1st|2nd|3rd|4th|last)\s+(?:one|option|idea|suggestion|approach|way))\b"
    r"(?!\s+(?:is|was|sounds|seems|looks)\s+(?:bad|wrong|awful|terrible|too|not))", re.I)


def _answer_part(text: str) -> tuple[str, bool]:
    """The part of the user's turn that answers the suggestion: what comes before a topic shift. Second value:
    whether the turn shifts topic after it."""
    head = text.strip()[:300]
    m = _TOPIC_SHIFT.search(head)
    if m:
        return head[:m.start()].strip(), True
    return head, False


def option_choice(user_text: str) -> int | None:
    """The option the user picks by ordinal (1-based; -1 = the last), or None."""
    m = _CHOICE.search(_answer_part(user_text)[0])
    if not m:
        return None
    w = (m.group("n") or m.group("h") or m.group("m") or m.group("o") or "").lower()
    if len(w) == 1 and w in "abcd":
        return "abcd".index(w) + 1
    return -1 if w == "last" else int(w) if w.isdigit() else _ORD.get(w)


_OPTION_MARK = re.compile(r"(?:^|(?<=[\s:;,(]))(?:or\s+)?(?:option\s+)?\(?(?:([1-4])[.):]|([A-D])[):])\s+")


def option_segments(text: str) -> list[Span]:
    """The numbered options of a suggestion ("Two options: 1) …, or 2) …"), in order; [] when fewer than two.
    Each span runs from after its marker to the next marker, its joining ", or" dropped."""
    marks = list(_OPTION_MARK.finditer(text))
    if len(marks) < 2 or [m.group(1) or m.group(2) for m in marks[:2]] not in (["1", "2"], ["A", "B"]):
        return []
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        seg = text[m.end():end]
        trimmed = re.sub(r"[\s,;]*(?:\bor|\band)?[\s,;]*$", "", seg)
        out.append(Span(m.end(), m.end() + len(trimmed), trimmed))
    return out


def chosen_options(agent_text: str, items: list, choice: int | None) -> tuple[list, list]:
    """(accepted, turned down) among the items mined from a suggestion, given the option the user picked. With no
    pick, or one item only, every item is accepted; with a pick, the items inside that numbered option (or, with no
    numbering, the pick-th item in text order) are accepted and the rest turned down."""
    if choice is None or len(items) < 2:
        return list(items), []
    segs = option_segments(agent_text)
    if len(segs) >= 2 and (choice == -1 or choice <= len(segs)):
        seg = segs[choice - 1] if choice > 0 else segs[-1]
        inside = [m for m in items if seg.start <= m.span.start < seg.end]
    else:
        ordered = sorted(items, key=lambda m: m.span.start)
        inside = [ordered[choice - 1 if choice > 0 else -1]] if choice <= len(ordered) else []
    if not inside:
        return list(items), []   # the pick does not map onto what was mined: keep the plain acceptance
    return inside, [m for m in items if m not in inside]


# the assistant offering to do something as a question (I145): "Would you like me to …?", "Want me to …?",
# "Shall I …?", "Should I … from now on?" — answered "yes", it is the same as "I'll …"
_OFFER = re.compile(r"(?:^|(?<=[.!?\n]\s)|(?<=\n))(?P<lead>(?:(?:so|ok(?:ay)?|also|and)[,\s]+)?(?:would\s+you\s+like\s+me\s+to|"
                    r"do\s+you\s+want\s+me\s+to|want\s+me\s+to|shall\s+i|should\s+i|may\s+i|can\s+i)\s+)"
                    r"(?P<body>[^?\n]{6,300})\?", re.I)


def offer_as_statement(text: str) -> str:
    """The assistant's text with each offer question rewritten as the promise it becomes once accepted ("Would you
    like me to always answer in Spanish?" → "I'll always answer in Spanish."), keeping every offset: the lead is
    replaced by spaces then "I'll ", the question mark by a full stop."""
    def repl(m: re.Match) -> str:
        lead = m.group("lead")
        pad = " " * max(0, len(lead) - 5)
        new = (pad + "I'll ") if len(lead) >= 5 else lead
        return new + m.group("body") + "."
    return _OFFER.sub(repl, text)


# Round 6 (I150): a refusal in other words than no — a negated clause anywhere in the answer ("my boss won't allow
# it", "can't afford that", "not the second one", "we tried that before and it didn't help"), or a reason that makes
# the suggestion moot ("I already have one", "we already do something similar"). Read only after the acceptance
# and doubt rules found nothing, so an acceptance with a "no" inside ("no problem, let's do it") stays one.
_NEGATED = re.compile(r"\b(?:not|never|no|nothing|none|nobody|neither|nor|cannot)\b|\w+n'?t\b", re.I)
# negations that are no refusal: interest, praise, reassurance ("I never knew that", "not bad", "no worries")
_NEG_IDIOM = re.compile(
    r"\b(?:(?:i\s+)?(?:never|didn'?t|did\s+not)\s+(?:knew|know|realis|realiz|thought\s+of|think\s+of|consider)\w*|"
    r"had\s+no\s+idea|(?:hadn'?t|never)\s+(?:thought|considered|heard)\w*|not\s+(?:too\s+)?bad|no\s+(?:problem|worries|"
    r"doubt|harm)|(?:doesn'?t|wouldn'?t|can'?t|won'?t)\s+hurt|can'?t\s+wait|couldn'?t\s+agree|why\s+not|"
    r"not\s+only|no\s+wonder|isn'?t\s+it|aren'?t\s+they|don'?t\s+forget|no\s+idea\s+(?:that|you)|"
    r"(?:can'?t|couldn'?t)\s+believe|(?:don'?t|wouldn'?t)\s+mind|no\s+kidding|no\s+idea|not\s+sure|"
    r"(?:i\s+)?(?:don'?t|do\s+not)\s+know)\b", re.I)
_MOOT = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:actually\s+|already\s+|got\s+)*(?:already)\s+(?:have|got|own|use|do|did|"
    r"tried|pay|run|keep|set|made|bought|subscribe)\w*|\b(?:i|we)\s+(?:tried|did)\s+(?:that|it|this)\s+(?:before|"
    r"already|last\s+\w+)\b|\bcan'?t\s+afford\b|\b(?:isn'?t|not)\s+allowed\b|\b(?:out\s+of|over|beyond)\s+(?:my|our)\s+"
    r"(?:budget|price\s+range|league)\b|^\s*(?:sadly|unfortunately|regrettably|alas|meh)\b|"
    # being covered already, preferring one's own, a judgement of effort or worth
    r"\bi'?m\s+(?:all\s+)?(?:set|sorted|covered)\b|\bi'?ve\s+got\s+(?:it|that|this)\s+(?:covered|sorted|handled)\b|"
    r"\bi'?ll\s+manage\b|\bhappy\s+with\s+(?:how\s+things\s+are|what\s+i\s+(?:have|do)|my\s+own)\b|"
    r"\bi\s+(?:much\s+|really\s+)?prefer\s+(?!(?:that|this|it|yours?|the\s+(?:first|second|third|last)|option)\b)|"
    r"\bi'?d\s+(?:much\s+)?rather\s+(?!not\b|you\b|do\s+(?:that|this|it)\b)|"
    r"\b(?:seems|sounds|that'?s|it'?s)\s+(?:a\s+bit\s+|rather\s+|quite\s+)?(?:excessive|unnecessary|pointless|a\s+waste|"
    r"overcomplicated|a\s+lot\s+of\s+(?:work|effort|faff|hassle))\b", re.I)


def _late_refusal(head: str) -> bool:
    """A negated clause (idioms of interest and praise aside) or a reason that makes the suggestion moot."""
    # a long turn with a negation deep inside is more often about something else: the answer is short (I150)
    return bool(_MOOT.search(head)) or (len(head.split()) <= 25 and bool(_NEGATED.search(_NEG_IDIOM.sub(" ", head))))


def _self_answered(head: str) -> str | None:
    """"Will that work offline? Actually no, forget it." — the user asks and answers: the answer is after the
    last question mark."""
    q = head.rfind("?")
    if q <= 0:
        return None
    tail = re.sub(r"^(?:actually|on\s+second\s+thoughts?|hmm+|well|wait|oh)\b[\s,.!…—–-]*", "", head[q + 1:].strip(),
                  flags=re.I)
    return tail or None


def reaction(user_text: str) -> Reaction:
    """How the user's turn answers the assistant turn before it. Rejection wins over acceptance ("ok, but no")."""
    head, shifted = _answer_part(user_text)
    if head and (tail := _self_answered(head)):
        r = reaction(tail)
        if r in ("accepted", "rejected"):
            return r
    if not head or (shifted and _BARE_ACK.match(head)):
        return "uncontested"   # moving on, or an "ok"/"thanks" that only acknowledges before a new topic
    if option_choice(head) is not None:
        return "accepted"   # picking one option accepts it (and turns down the others, I142)
    if _NEG_HEAD.search(head) or _REJECT.search(head) or _INSTEAD.search(head):
        return "rejected"
    if _DEFER.search(head):
        return "contested"   # a deferral is no acceptance and writes nothing (I143)
    body = head[len(_EXCLAIM.match(head).group(0)):]   # "Ooh, good idea": an exclamation first
    heads = _YES_HEADS.match(body)
    affirmed = heads is not None and not _ACK_ONLY.match(heads.group(0)) and not (
        _WEAK_ACK.match(heads.group(0)) and _ACK_WORD.search(heads.group(0)))
    accepts = bool(_ACCEPT.search(head)) or (affirmed and bool(_YES_TAIL.match(body[heads.end():].strip())))
    if _CONTEST.search(head) or (is_question(head) and not accepts):
        return "contested"
    if accepts:
        return "accepted"
    if _late_refusal(head):
        return "rejected"
    return "uncontested"


def is_suggestion(assistant_text: str) -> bool:
    return bool(_SUGGESTION.search(assistant_text))


@dataclass(frozen=True)
class AgentTurn:
    """The assistant turn the user's observation answers, and how it was answered."""
    message_id: str | None
    text: str
    reaction: Reaction


def answered_agent_turn(obs: Observation) -> AgentTurn | None:
    """For a user message: the assistant turn right before it (the last context turn) and the user's reaction.
    An assistant message itself is decided on the user's next turn, never on its own (silence ≠ acceptance)."""
    if obs.role != "user" or not obs.context:
        return None
    prev: dict[str, Any] = obs.context[-1]
    if prev.get("role") != "assistant" or not (prev.get("text") or "").strip():
        return None
    return AgentTurn(prev.get("message_id"), prev.get("text") or "", reaction(obs.text))


from kenning.intake.extractors import register_reply_cue  # noqa: E402

# a user turn answering an assistant suggestion decides it (I21), so the funnel must not skip that turn (I172)
register_reply_cue("attribution", is_suggestion)
