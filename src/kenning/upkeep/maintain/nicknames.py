"""A bundled table of English given names and their common nicknames / short forms (G61), used only as evidence
for the merge queue ("Bob" may be "Robert"), never to fold on its own. One line per given name: the name, then
its short forms. A short form may belong to several names ("Chris": Christopher, Christina, Christian); that
makes a pairing ambiguous, which the duplicate rules treat as no evidence. Names only — no data about anyone."""

from __future__ import annotations

from functools import lru_cache

_TABLE = """
abigail: abby abbie gail
abraham: abe bram
adam: ad
adrian: ade
agnes: aggie nessa
albert: al bert bertie
alexander: alex alec sasha sandy xander lex
alexandra: alex sasha sandra lexi alexa
alfred: al alf alfie fred
alice: allie ally
amanda: mandy manda
andrew: andy drew
angela: angie
anne: annie nan nancy
anthony: tony ant
antonio: tony toni
arthur: art artie
barbara: barb barbie babs
benjamin: ben benny benji
bernard: bernie
beatrice: bea trixie
bradley: brad
catherine: cathy kate katie cat kit
charles: charlie chuck chas chaz
charlotte: lottie charlie lotte
christian: chris
christina: chris tina chrissy
christine: chris chrissy tina
christopher: chris kit topher
cynthia: cindy
daniel: dan danny
daniela: dani
danielle: dani
david: dave davy
deborah: deb debbie
dennis: den
dominic: dom
donald: don donnie
dorothy: dot dottie dolly
douglas: doug
edward: ed eddie ted teddy ned
edmund: ed eddie ned
eleanor: ellie nell nora
elizabeth: liz lizzie beth betsy betty eliza libby bess lisa
emily: em emmy
emma: em
eugene: gene
evelyn: eve evie
florence: flo florrie
frances: fran frannie fanny
francis: frank frankie fran
frederick: fred freddie
gabriel: gabe
gabriella: gabby ella
geoffrey: geoff jeff
gerald: gerry jerry
gregory: greg
harold: harry hal
harriet: hattie
helen: nell
henrietta: etta hetty
henry: harry hank hal
herbert: herb bert
isabel: izzy bella isa
isabella: bella izzy
jacob: jake jay
james: jim jimmy jamie
janet: jan
jennifer: jen jenny
jessica: jess jessie
joanna: jo
johanna: jo hanna
john: jack johnny
jonathan: jon jonny nathan
joseph: joe joey
josephine: jo josie
joshua: josh
judith: judy jude
katherine: kate katie kathy kat kit
kathleen: kathy kate
kenneth: ken kenny
lawrence: larry laurie
leonard: leo len lenny
lewis: lew lou
louis: lou
louise: lou
lucas: luke
lukas: luke
madeleine: maddie maddy
magdalena: magda lena
margaret: maggie meg peg peggy marge madge greta
martha: marty mattie
matthew: matt
michael: mike mick mickey
nathaniel: nat nate nathan
nicholas: nick nicky
nicole: nicky nikki
oliver: ollie
patricia: pat patty trish tricia
patrick: pat paddy
peter: pete
philip: phil pip
rebecca: becky becca
richard: rick rich ricky dick
robert: bob bobby rob robbie bert
ronald: ron ronnie
samantha: sam sammy
samuel: sam sammy
sebastian: seb bas
stephanie: steph
stephen: steve
steven: steve
susan: sue susie
theodore: ted teddy theo
thomas: tom tommy
timothy: tim timmy
valentina: vale tina
veronika: vero nika
veronica: ronnie vero
victoria: vicky tori
vincent: vince vinny
walter: walt wally
william: will bill billy willy liam
zachary: zach zack
andrea:
andreas: andi
anna: annie
carl:
carla:
erik:
erika:
hanna:
hannah:
jan:
jana:
jonah:
jonas:
julia: jules
julie:
karl:
karla:
lena:
lina:
marco:
maria: mia
marie:
mario:
paul:
paula:
"""


@lru_cache(maxsize=1)
def _maps() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """given name or short form → the given names it can stand for (a given name stands for itself)."""
    roots: dict[str, set[str]] = {}
    for line in _TABLE.strip().splitlines():
        name, _, rest = line.partition(":")
        name = name.strip()
        roots.setdefault(name, set()).add(name)
        for short in rest.split():
            roots.setdefault(short, set()).add(name)
    given = frozenset(line.partition(":")[0].strip() for line in _TABLE.strip().splitlines())
    return {k: frozenset(v) for k, v in roots.items()}, given


def given_names_of(token: str) -> frozenset[str]:
    """The given names ``token`` (normalized, lower case) can be: {"robert"} for "bob", {"robert"} for "robert",
    several for an ambiguous short form, empty when the table does not know it."""
    return _maps()[0].get(token, frozenset())


def is_given_name(token: str) -> bool:
    """``token`` is a full given name of the table (not only a short form)."""
    return token in _maps()[1]


def same_given_name(a: str, b: str) -> bool:
    """Two different first-name tokens that can stand for one given name ("bob" / "robert", "liz" / "beth"). An
    ambiguous short form ("chris") matches each name it can be; the callers require the pairing to be unique
    among the nodes that share context."""
    return a != b and bool(given_names_of(a) & given_names_of(b))
