"""The board's words in English and Japanese: every label, question and event line.

``say(lang, key, **fields)`` formats one; a missing Japanese entry is a bug the
tests catch (every English key has a Japanese one).
"""

from __future__ import annotations

from ...engine.cards import CARDS, MONTH_NAMES_EN, MONTH_NAMES_JA, Card, Kind, Ribbon

__all__ = ["WORDS", "kind_label", "month_label", "say", "short_name"]

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "round": "Round {r} of {n}",
        "you_deal": "You deal (oya)",
        "they_deal": "{name} deals (oya)",
        "double_on": "×2 at 8+ on",
        "double_off": "×2 at 8+ off",
        "pools": "Points: {me} {pm} · {them} {pt}",
        "mult": "Multiplier ×{m}",
        "calls_none": "no koi-koi yet",
        "calls": "koi-koi: {who}",
        "call_item": "{who} at {total}",
        "deck": "Deck {n}",
        "clock": "⏱ {t}",
        "clock_them": "{name} ⏱ {t}",
        "opp_head": "{name}: {n} in hand · captured {c} · {pts}",
        "me_head": "You: captured {c} · {pts}",
        "pts": "{n} pt",
        "pts_n": "{n} pts",
        "called": "called ×{n}, last at {t}",
        "field": "Field ({n})",
        "field_empty": "(the field is empty)",
        "hand": "Your hand ({n})",
        "hand_empty": "(your hand is empty)",
        "takes": "→ {what}",
        "takes_or": "→ {a} or {b}",
        "takes_all": "→ all: {what}",
        "drawn_wait": "Drawn: {card} — choose its capture",
        "events": "Last events",
        "you": "You",
        "progress_none": "no yaku in sight yet",
        # prompts
        "q_play": "Play a card: 1–{n} or ←→ + Enter · y yaku · h help · q quit",
        "q_pick": "{card} takes which? 1 {a} · 2 {b} (or ←→ + Enter; Esc back)",
        "q_choose": "The drawn {card} takes which? 1 {a} · 2 {b} (or ←→ + Enter)",
        "q_decide": "k koi-koi (play on at ×{m}) · s shōbu (take {p} now) · y yaku · h help",
        "q_last": "Last turn: s (or Enter) calls shōbu and takes {p}",
        "q_wait": "{name} is thinking…",
        "q_round": "Press Enter for the next round · q quit",
        "q_again": "Play again? y yes · n no",
        "q_over": "The match is over · press Enter to leave",
        "ends_match": "shōbu now ends the match",
        "decide_head": "Your yaku: {pts} — koi-koi or shōbu?",
        "decide_shobu": "Shōbu now pays you {p}; the count:",
        "decide_koikoi": "Koi-koi: play on, the multiplier goes to ×{m}; if {name} then wins, you get nothing.",
        "decide_last": "Both hands are empty: only shōbu is offered.",
        "round_win": "Round {r}: {who} won {p} ({how})",
        "round_drawn": "Round {r} is drawn: nobody pays; the dealer stays ({who})",
        "by_shobu": "by shōbu",
        "by_hand": "dealt hand yaku",
        "match_win_me": "The match is over: you win, {a} to {b}",
        "match_win_them": "The match is over: {name} wins, {a} to {b}",
        "match_draw": "The match is over: a draw, {a} to {b}",
        "not_in_hand": "{n} is not a card in your hand (1–{m}).",
        "not_choice": "{n} is not one of the choices (1–2).",
        "only_shobu": "This is the last turn: only shōbu is offered.",
        "not_your_turn": "Wait for your turn: {name} is to move.",
        # events
        "ev_play_take": "{who} played {card}, took {taken}",
        "ev_play_field": "{who} played {card} to the field",
        "ev_draw_take": "{who} drew {card}, took {taken}",
        "ev_draw_field": "{who} drew {card} to the field",
        "ev_drawn": "{who} drew {card}: two matches, a choice",
        "ev_choose": "{who} took {taken} with the drawn {card}",
        "ev_yaku": "{who} made {yaku} ({p})",
        "ev_koikoi": "{who} called koi-koi at {t}: ×{m}",
        "ev_shobu": "{who} called shōbu with {t}",
        "ev_deal": "Round {r}: dealer {who}",
        "ev_redeal": "Round {r}: four of a month on the field, dealt again",
        "ev_hand_yaku": "{who}: {yaku} in the dealt hand, 6 points",
        "and": ", ",
        # dialogs
        "confirm_resign": "Leave the match? It counts as a resignation: your opponent wins.",
        "confirm_abandon": "Abandon this practice match?",
        "confirm_keys": "y yes · n no",
        "yaku_title": "Yaku and their points (this game's rules)",
        "help_title": "Help",
        "close_keys": "Esc or any key closes",
        "interrupted": "Interrupted.",
        "intro": "Practice against the computer ({label}): {rounds} rounds, {dbl}.",
        "turned": "You turned {a}, {name} turned {b}: the first dealer is {who}.",
        "turned_again": "Both turned plains of one month ({a}, {b}): turn again.",
        "level": "level {level}: the {bot} bot",
        "bot": "bot {spec}",
        "plain_keys": "At any prompt: h for help, t for the table, q to quit.",
        "transcript": "Transcript: {path}",
        "abandoned": "match abandoned ({how})",
        "how_quit": "you quit",
        "how_eof": "end of input",
        "how_interrupt": "interrupted",
        "password": "Room {room} needs a password (not shown as you type; Enter to send, Esc for none):",
        "password_keys": "Enter sends · Esc: no password",
    },
    "ja": {
        "round": "第{r}局／全{n}局",
        "you_deal": "親：あなた",
        "they_deal": "親：{name}",
        "double_on": "8点以上で2倍：あり",
        "double_off": "8点以上で2倍：なし",
        "pools": "持ち点：{me} {pm}・{them} {pt}",
        "mult": "倍率 ×{m}",
        "calls_none": "こいこいなし",
        "calls": "こいこい：{who}",
        "call_item": "{who}（{total}点）",
        "deck": "山札 {n}",
        "clock": "⏱ 残り{t}",
        "clock_them": "{name} ⏱ 残り{t}",
        "opp_head": "{name}：手札{n}枚・取り札{c}枚・{pts}",
        "me_head": "あなた：取り札{c}枚・{pts}",
        "pts": "{n}点",
        "pts_n": "{n}点",
        "called": "こいこい{n}回、最後は{t}",
        "field": "場札（{n}枚）",
        "field_empty": "（場札なし）",
        "hand": "手札（{n}枚）",
        "hand_empty": "（手札なし）",
        "takes": "→ {what}",
        "takes_or": "→ {a}か{b}",
        "takes_all": "→ 全部：{what}",
        "drawn_wait": "めくり札：{card}（取る札を選ぶ）",
        "events": "最近の出来事",
        "you": "あなた",
        "progress_none": "まだ役の見込みなし",
        "q_play": "出す札：1–{n} または ←→＋Enter・y 役一覧・h ヘルプ・q 終了",
        "q_pick": "{card}で取る札は？ 1 {a}・2 {b}（←→＋Enter、Escで戻る）",
        "q_choose": "めくった{card}で取る札は？ 1 {a}・2 {b}（←→＋Enter）",
        "q_decide": "k こいこい（×{m}で続ける）・s 勝負（今{p}）・y 役一覧・h ヘルプ",
        "q_last": "最後の手番：s（またはEnter）で勝負、{p}",
        "q_wait": "{name}の番です…",
        "q_round": "Enterで次の局へ・q 終了",
        "q_again": "もう一度遊びますか？ y はい・n いいえ",
        "q_over": "対戦終了・Enterで終わります",
        "ends_match": "勝負すると対戦が終わります",
        "decide_head": "あなたの役：{pts}。こいこいか勝負か？",
        "decide_shobu": "今勝負すると{p}。計算：",
        "decide_koikoi": "こいこい：続けて倍率は×{m}。{name}が上がればこの局は0点。",
        "decide_last": "両者の手札がないので勝負のみ。",
        "round_win": "第{r}局：{who}の勝ち {p}点（{how}）",
        "round_drawn": "第{r}局は流局：支払いなし、親は{who}のまま",
        "by_shobu": "勝負",
        "by_hand": "手役",
        "match_win_me": "対戦終了：あなたの勝ち、{a}対{b}",
        "match_win_them": "対戦終了：{name}の勝ち、{a}対{b}",
        "match_draw": "対戦終了：引き分け、{a}対{b}",
        "not_in_hand": "{n}番の札はありません（1–{m}）。",
        "not_choice": "{n}は選べません（1–2）。",
        "only_shobu": "最後の手番なので勝負のみです。",
        "not_your_turn": "{name}の番です。お待ちください。",
        "ev_play_take": "{who}：{card}で{taken}を取った",
        "ev_play_field": "{who}：{card}を場に出した",
        "ev_draw_take": "{who}：めくった{card}で{taken}を取った",
        "ev_draw_field": "{who}：めくった{card}を場に出した",
        "ev_drawn": "{who}：めくった{card}は二枚と合う（選択）",
        "ev_choose": "{who}：めくった{card}で{taken}を取った",
        "ev_yaku": "{who}：{yaku}ができた（{p}点）",
        "ev_koikoi": "{who}：{t}点でこいこい、×{m}",
        "ev_shobu": "{who}：{t}点で勝負",
        "ev_deal": "第{r}局：親は{who}",
        "ev_redeal": "第{r}局：場に同じ月が四枚、配り直し",
        "ev_hand_yaku": "{who}：手役{yaku}で6点",
        "and": "・",
        "confirm_resign": "対戦をやめますか？ 投了となり、相手の勝ちになります。",
        "confirm_abandon": "この練習対戦をやめますか？",
        "confirm_keys": "y はい・n いいえ",
        "yaku_title": "役と点数（このゲームのルール）",
        "help_title": "ヘルプ",
        "close_keys": "Escか何かのキーで閉じる",
        "interrupted": "中断しました。",
        "intro": "コンピューターとの練習（{label}）：{rounds}局、{dbl}。",
        "turned": "あなたは{a}、{name}は{b}をめくった：最初の親は{who}。",
        "turned_again": "同じ月のカス（{a}、{b}）：めくり直し。",
        "level": "レベル {level}：{bot}ボット",
        "bot": "ボット {spec}",
        "plain_keys": "どの質問でも：h ヘルプ、t 場の表示、q 終了（答えは英語の表示のとおりに）。",
        "transcript": "棋譜：{path}",
        "abandoned": "対戦を中止しました（{how}）",
        "how_quit": "あなたがやめた",
        "how_eof": "入力の終わり",
        "how_interrupt": "中断",
        "password": "部屋 {room} にはパスワードが必要です（入力は表示されません。Enterで送信、Escでなし）：",
        "password_keys": "Enterで送信・Esc：パスワードなし",
    },
}


def say(lang: str, key: str, **fields: object) -> str:
    table = WORDS.get(lang, WORDS["en"])
    return table.get(key, WORDS["en"][key]).format(**fields)


_KIND_EN = {Kind.LIGHT: "Lights", Kind.TANE: "Tane", Kind.RIBBON: "Ribbons", Kind.PLAIN: "Plains"}
_KIND_JA = {Kind.LIGHT: "光", Kind.TANE: "タネ", Kind.RIBBON: "短冊", Kind.PLAIN: "カス"}


def kind_label(kind: Kind, lang: str) -> str:
    return (_KIND_JA if lang == "ja" else _KIND_EN)[kind]


def month_label(month: int, lang: str) -> str:
    """``9 Chrysanthemum`` / ``9 菊``."""
    names = MONTH_NAMES_JA if lang == "ja" else MONTH_NAMES_EN
    return f"{month:>2} {names[month - 1]}"


_SHORT_EN = {
    "Red Poem Ribbon": "Poem Ribbon",
    "Eight-plank Bridge": "Bridge",
    "Lightning (plain)": "Lightning",
    "plain (yellow)": "plain yellow",
}


def _short(card: Card, lang: str) -> str:
    info = CARDS[card]
    if lang == "ja":
        month = MONTH_NAMES_JA[info.month - 1]
        rest = info.name_ja[len(month) :] if info.name_ja.startswith(month) else info.name_ja
        return rest.lstrip("にの") or info.name_ja
    name = info.name_en
    if " with " in name:
        rest = name.split(" with ", 1)[1]
    else:
        words = name.split(" ")
        rest = " ".join(w for w in words if w[0].islower() or w[0].isdigit() or w.startswith("("))
    return _SHORT_EN.get(rest, rest) or name


_SHORTS: dict[str, tuple[str, ...]] = {lang: tuple(_short(c, lang) for c in range(48)) for lang in ("en", "ja")}


def short_name(card: Card, lang: str) -> str:
    """The card's name without its month: ``Crane``, ``plain 1``, ``Poem Ribbon`` / ``鶴``, ``カス1``."""
    return _SHORTS["ja" if lang == "ja" else "en"][card]


def ribbon_style(card: Card) -> str:
    r = CARDS[card].ribbon
    if r is Ribbon.AKATAN:
        return "poem"
    if r is Ribbon.AOTAN:
        return "blue"
    return "ribbon"
