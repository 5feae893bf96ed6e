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
        "calls_short": "koi-koi ×{n}, last: {who}",
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
        "more_caps": "+{n} (c shows all)",
        "q_start": "Waiting for the match to start · q quit",
        "too_small": "This window is {w}×{h}: make the window at least 80×24 to see the board.",
        "too_small_keys": "q quit · Ctrl-C stop · h help (or play in the text mode: --plain)",
        "players_head": "Who you are playing: compare the keys aloud (by phone or in person)",
        "players_keys": "Your key {me} · your opponent's {opp}",
        "players_relay": "The relay (the time witness): {relay}",
        "players_relay_none": "The relay has no key: nobody can win on time in this match",
        "players_you_run": "; you run it (your program is the witness)",
        "players_they_may_run": (
            "; if your opponent started it (koikoi host without --relay), their program is the witness"
        ),
        "caps_title": "Captured cards",
        "scroll_keys": "↑↓ PgUp PgDn scroll · Esc or {k} closes",
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
        "close_keys": "Esc closes",
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
        # network play (koikoi host, join, resume): the session's lines
        "net_interrupted": "interrupted: the match so far is saved; continue it with {resume}",
        "net_interrupted_waiting": "interrupted before anyone joined: there is no match to continue",
        "net_sealed": (
            "Sealed deck: neither program sees the opponent's hand or the deck; each card is opened only "
            "when it is played, drawn or yours, and both sides' keys are checked at every round's end."
        ),
        "net_shared": (
            "Shared deck: both programs derive the whole deal from one seed (a modified one sees every card)."
        ),
        "net_no_clock": "No clock in this match (--move-time none): nobody can win or lose on time.",
        "net_clock": (
            "The clock: {mt} s for each move. Let it run out and your opponent can win the match on time; "
            "the relay (witness {w}) signs who stayed silent and for how long. A relay that lies about time "
            "can favour one side."
        ),
        "net_witness_none": "none",
        "net_you_run_relay": "You run this relay: your program is the time witness, and your opponent is told so.",
        "net_they_may_run_relay": (
            "If your opponent runs this relay (koikoi host without --relay), their own program is the time witness."
        ),
        "net_begins": "The match begins: you are seat {seat} ({role}); {bound}.",
        "net_role_creator": "the room's creator",
        "net_role_joiner": "the joiner",
        "net_keys": "Your key: {me}; your opponent's: {opp} — compare them aloud.",
        "net_first_dealer": "{who} first (chosen by the commit-reveal coin flip: neither side could steer it).",
        "net_you_deal": "You deal",
        "net_they_deal": "Your opponent deals",
        "net_back": "Back in the match (seat {seat}, {mt}): you have {me} points, your opponent {them}.",
        "net_before": "Before the interruption:",
        "net_meanwhile": "Anything your opponent did meanwhile follows.",
        "net_creator_signed": "The creator ({creator}) signed the room's settings: {settings}.",
        "net_warn_me": "You have {s} s left for the {what}: after that your opponent can win the match on time.",
        "net_warn_them": (
            "Your opponent has {s} s left for the {what}; then you win on time if the relay certifies their silence."
        ),
        "net_warn_me_board": (
            "Your time for the {what} is running out (the clock above): then your opponent can win the match on time."
        ),
        "net_warn_them_board": (
            "Your opponent's time for the {what} is running out (the clock above): then you win on time if the relay"
            " certifies their silence."
        ),
        "net_time_up": "Your time for the {what} is up: your opponent may now win the match on time.",
        "net_what_move": "move",
        "net_what_result": "result",
        "net_what_handshake": "handshake",
        "net_your_move": "(Your move: {left} s on the clock.)",
        "net_lost": "Lost the connection to the relay ({code}); reconnecting…",
        "net_relay_note": "Note: {message}.",
        "net_you_left": "You left the match: it counts as a resignation.",
        "net_bot_failed": "The bot failed ({reason}): resigning.",
        "net_failure_bot": "the bot failed: {reason}",
        "net_seat_back": "The relay gave the seat back: the room had not closed. Playing on.",
        "net_reconnected": "Connected to the relay again.",
        "net_reconnected_rebuilt": "Connected to the relay again (it had restarted; the room is rebuilt).",
        "net_joined": "Your opponent has joined.",
        "net_away": "Your opponent's connection dropped; the relay keeps the seat for {grace}.",
        "net_grace_s": "{s} s",
        "net_grace_while": "a while",
        "net_peer_back": "Your opponent is back.",
        "net_room_closed": (
            "The relay says the room closed ({code}: {message}); it proves nothing that ends the match, so "
            "this seat is kept: taking it back…"
        ),
        "net_closed_stop": (
            "the relay closed the room ({code}: {message}) and does not give the seat back ({err}); "
            "{cert}nobody wins, the match stays unfinished in {path}"
        ),
        "net_closed_cert": "its certificate does not prove your opponent's silence at this point of the match; ",
        "net_replaced": "another koikoi program took this seat back (koikoi resume?); this one stops here",
        "net_seat_key_stop": (
            "the relay says your opponent's seat is held by key {bound}, but its signed HELLO names key {hello}: this"
            " relay could never witness its silence, so the match is not started (nobody wins or loses)"
        ),
        "net_seat_key_note": (
            "Note: the relay says your opponent's seat is now held by key {bound}, not its HELLO's {hello}: this"
            " relay cannot certify a timeout in this match any more."
        ),
        "net_refused": "the relay refused to give the seat back ({code}: {message}); the match is saved in {path}",
        "net_unreachable": (
            "cannot reach the relay at {url} any more ({message}); the match is saved: continue it with "
            "`koikoi resume {path}`"
        ),
        "net_output_closed": "the terminal went away: the match is saved; continue it with `koikoi resume {path}`",
        "net_signed": "Both players signed the result.",
        "net_draw": "a draw, {a} to {b}",
        "net_you_won": "you won, {a} to {b}",
        "net_they_won": "your opponent won, {a} to {b}",
        "net_how_signed": "both players signed the result",
        "net_match_over": "Match over: {verdict} ({how}).",
        "net_match_decided": "Match over: {verdict}: {how}. Points when it ended: you {me}, your opponent {them}.",
        "net_you_won_by": "you won",
        "net_they_won_by": "your opponent won",
        "net_you_won_time": "you won on time",
        "net_they_won_time": "your opponent won on time",
        "net_nobody_won_by": "nobody won",
        "net_you_resigned_failure": "you resigned: {failure}",
        "net_they_left": "your opponent left and did not come back; the relay certified their silence",
        "net_you_away": "you were away past the grace period; the relay certified your silence",
        "net_they_slow": "your opponent did not move in time; the relay certified their silence",
        "net_you_slow": "you did not move in time; the relay certified your silence",
        "net_you_resigned": "you resigned",
        "net_they_resigned": "your opponent resigned",
        "net_you_accused": "you accused your opponent without proof, which counts as resigning",
        "net_they_accused": "your opponent accused you without proof, which counts as their resignation",
        "net_you_claimed": "you claimed a timeout the relay had not certified, which counts as resigning",
        "net_they_claimed": (
            "your opponent claimed a timeout the relay had not certified, which counts as their resignation"
        ),
        "net_settings_differ": "the room's settings differ from what you expect: {parts}",
        "net_settings_differ_raw": "the two players' settings differ ({message})",
        "net_room_mismatch": "the relay seated the two players in different rooms ({message})",
        "net_relay_mismatch": "the two players reached the match through relays with different keys ({message})",
        "net_fault": "a proven fault by {side}: {code}: {what} ({message})",
        "net_fault_them": "your opponent",
        "net_fault_me": "you (as your opponent saw it)",
        "net_nobody_wins": "{head}; nobody wins",
        "net_you_win": "{head}; you win the match",
        "net_they_win": "{head}; your opponent wins the match",
        "net_rounds": "{n} rounds",
        "net_created": "Created {kind} {room} on {url}: {bound}{lock}.",
        "net_created_room": "room",
        "net_created_private": "private room",
        "net_created_lock": ", with a password",
        "net_created_asks": " (it asks for the password)",
        "net_created_joins": "Your opponent joins with{asks}:",
        "net_created_waiting": "Waiting for your opponent…",
        "net_rounds_unknown": "? rounds",
        "net_double_on": "×2 at 8+",
        "net_double_off": "no ×2 at 8+",
        "net_move_time": "{s} s a move",
        "net_move_time_unknown": "? s a move",
        "net_move_time_none": "no clock",
        "net_deck_sealed": "sealed deck",
        "net_deck_shared": "shared deck",
        "net_deck_other": "{deck} deck",
        "net_list": ", ",
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
        "calls_short": "こいこい{n}回、最後：{who}",
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
        "more_caps": "+{n}（cで全部）",
        "q_start": "対戦の開始を待っています・q 終了",
        "too_small": "この画面は{w}×{h}です：盤面を表示するには80×24以上にしてください。",
        "too_small_keys": "q 終了・Ctrl-C 中断・h ヘルプ（文章モード：--plain）",
        "players_head": "対戦相手の確認：鍵を声に出して照らし合わせてください（電話や対面で）",
        "players_keys": "あなたの鍵 {me}・相手の鍵 {opp}",
        "players_relay": "リレー（時間の証人）：{relay}",
        "players_relay_none": "リレーに鍵がありません：この対戦に時間切れの勝ちはありません",
        "players_you_run": "。あなたが動かしています（あなたのプログラムが証人）",
        "players_they_may_run": "。相手が動かしている場合（--relay なしの koikoi host）、相手のプログラムが証人",
        "caps_title": "取り札",
        "scroll_keys": "↑↓ PgUp PgDn スクロール・Escか{k}で閉じる",
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
        "close_keys": "Escで閉じる",
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
        "net_interrupted": "中断しました：ここまでの対戦は保存されています。続きは {resume}",
        "net_interrupted_waiting": "誰も参加しないうちに中断しました：続ける対戦はありません",
        "net_sealed": (
            "伏せた山札（sealed）：どちらのプログラムも相手の手札と山札を見られません。"
            "札は出す・めくる・自分の札になるときだけ開かれ、各局の終わりに双方の鍵が確かめられます。"
        ),
        "net_shared": (
            "共有の山札（shared）："
            "双方のプログラムが一つのシードから配り全体を作ります（改造したプログラムには全部の札が見えます）"
            "。"
        ),
        "net_no_clock": "この対戦に持ち時間はありません（--move-time none）：時間切れの勝ち負けはありません。",
        "net_clock": (
            "持ち時間：一手{mt}秒。使い切ると相手が時間切れ勝ちにできます。リレー（証人 {w}）"
            "が誰がどれだけ黙っていたかに署名します。時間について嘘をつくリレーは一方に有利にできます。"
        ),
        "net_witness_none": "なし",
        "net_you_run_relay": (
            "このリレーはあなたが動かしています：あなたのプログラムが時間の証人で、相手にもそう伝えられます。"
        ),
        "net_they_may_run_relay": (
            "相手がこのリレーを動かしている場合（--relay なしの koikoi host）、相手自身のプログラムが時間の証人です。"
        ),
        "net_begins": "対戦開始：あなたは席{seat}（{role}）。{bound}。",
        "net_role_creator": "部屋の作成者",
        "net_role_joiner": "参加者",
        "net_keys": "あなたの鍵：{me}、相手の鍵：{opp}（声に出して照らし合わせてください）。",
        "net_first_dealer": "{who}（コミット・リビールのコイン投げで決定：どちらも操作できません）。",
        "net_you_deal": "最初の親はあなた",
        "net_they_deal": "最初の親は相手",
        "net_back": "対戦に戻りました（席{seat}、{mt}）：あなた{me}点、相手{them}点。",
        "net_before": "中断の前：",
        "net_meanwhile": "その間に相手がしたことは続けて表示します。",
        "net_creator_signed": "作成者（{creator}）が部屋の設定に署名しました：{settings}。",
        "net_warn_me": "{what}の残り時間は{s}秒：過ぎると相手が時間切れ勝ちにできます。",
        "net_warn_them": "相手の{what}の残り時間は{s}秒：リレーが相手の沈黙を証明すれば、あなたの時間切れ勝ちです。",
        "net_warn_me_board": "{what}の時間が残りわずかです（上の時計）：過ぎると相手が時間切れ勝ちにできます。",
        "net_warn_them_board": (
            "相手の{what}の時間が残りわずかです（上の時計）：リレーが相手の沈黙を証明すれば、あなたの時間切れ勝ちです。"
        ),
        "net_time_up": "{what}の時間切れ：相手が時間切れ勝ちにできます。",
        "net_what_move": "手番",
        "net_what_result": "結果の署名",
        "net_what_handshake": "接続の手続き",
        "net_your_move": "（あなたの番：残り{left}秒）",
        "net_lost": "リレーとの接続が切れました（{code}）。再接続中…",
        "net_relay_note": "注意：{message}。",
        "net_you_left": "対戦をやめました：投了になります。",
        "net_bot_failed": "ボットが失敗しました（{reason}）：投了します。",
        "net_failure_bot": "ボットが失敗：{reason}",
        "net_seat_back": "リレーが席を返しました：部屋は閉じていませんでした。続けます。",
        "net_reconnected": "リレーに再接続しました。",
        "net_reconnected_rebuilt": "リレーに再接続しました（リレーが再起動し、部屋を作り直しました）。",
        "net_joined": "相手が参加しました。",
        "net_away": "相手の接続が切れました。リレーは{grace}席を保ちます。",
        "net_grace_s": "{s}秒",
        "net_grace_while": "しばらく",
        "net_peer_back": "相手が戻りました。",
        "net_room_closed": (
            "リレーは部屋が閉じたと言っています（{code}：{message}）。対戦を終わらせる証明ではないので、"
            "席を保ち、取り戻します…"
        ),
        "net_closed_stop": (
            "リレーが部屋を閉じ（{code}：{message}）、席を返しません（{err}）。{cert}勝者なし、対戦は "
            "{path} に未完のまま残ります"
        ),
        "net_closed_cert": "その証明書はこの時点での相手の沈黙を証明しません。",
        "net_replaced": "別の koikoi プログラムがこの席を取り戻しました（koikoi resume？）。こちらはここで止まります",
        "net_seat_key_stop": (
            "リレーによると相手の席は鍵 {bound} のものですが、相手の署名付き HELLO の鍵は {hello} です。このリレーは"
            "相手の沈黙を証明できないため、対戦は始めません（勝ち負けはつきません）"
        ),
        "net_seat_key_note": (
            "注意：リレーによると相手の席は今 HELLO の鍵 {hello} ではなく鍵 {bound} のものです。この対戦では"
            "このリレーは時間切れを証明できません。"
        ),
        "net_refused": "リレーが席を返すのを拒みました（{code}：{message}）。対戦は {path} に保存されています",
        "net_unreachable": (
            "リレー {url} にもう届きません（{message}）。対戦は保存されています。続きは `koikoi resume {path}`"
        ),
        "net_output_closed": "端末がなくなりました：対戦は保存されています。続きは `koikoi resume {path}`",
        "net_signed": "双方が結果に署名しました。",
        "net_draw": "引き分け、{a}対{b}",
        "net_you_won": "あなたの勝ち、{a}対{b}",
        "net_they_won": "相手の勝ち、{a}対{b}",
        "net_how_signed": "双方が結果に署名",
        "net_match_over": "対戦終了：{verdict}（{how}）。",
        "net_match_decided": "対戦終了：{verdict}：{how}。終了時の持ち点：あなた{me}、相手{them}。",
        "net_you_won_by": "あなたの勝ち",
        "net_they_won_by": "相手の勝ち",
        "net_you_won_time": "あなたの時間切れ勝ち",
        "net_they_won_time": "相手の時間切れ勝ち",
        "net_nobody_won_by": "勝者なし",
        "net_you_resigned_failure": "あなたの投了：{failure}",
        "net_they_left": "相手が去って戻らず、リレーが相手の沈黙を証明しました",
        "net_you_away": "猶予時間を過ぎても戻らず、リレーがあなたの沈黙を証明しました",
        "net_they_slow": "相手が時間内に指さず、リレーが相手の沈黙を証明しました",
        "net_you_slow": "時間内に指さず、リレーがあなたの沈黙を証明しました",
        "net_you_resigned": "あなたの投了",
        "net_they_resigned": "相手の投了",
        "net_you_accused": "証拠なしに相手を訴えたため、投了とみなされます",
        "net_they_accused": "相手が証拠なしにあなたを訴えたため、相手の投了とみなされます",
        "net_you_claimed": "リレーが証明していない時間切れを主張したため、投了とみなされます",
        "net_they_claimed": "相手がリレーの証明していない時間切れを主張したため、相手の投了とみなされます",
        "net_settings_differ": "部屋の設定が期待と違います：{parts}",
        "net_settings_differ_raw": "双方の設定が違います（{message}）",
        "net_room_mismatch": "リレーが二人を別々の部屋に入れました（{message}）",
        "net_relay_mismatch": "二人が鍵の違うリレーを通して対戦に来ました（{message}）",
        "net_fault": "{side}の反則が証明されました：{code}：{what}（{message}）",
        "net_fault_them": "相手",
        "net_fault_me": "あなた（相手の見たところ）",
        "net_nobody_wins": "{head}。勝者なし",
        "net_you_win": "{head}。あなたの勝ち",
        "net_they_win": "{head}。相手の勝ち",
        "net_rounds": "全{n}局",
        "net_created": "{url} に{kind} {room} を作りました：{bound}{lock}。",
        "net_created_room": "部屋",
        "net_created_private": "非公開の部屋",
        "net_created_lock": "、パスワード付き",
        "net_created_asks": "（パスワードを尋ねます）",
        "net_created_joins": "相手はこれで参加します{asks}：",
        "net_created_waiting": "相手を待っています…",
        "net_rounds_unknown": "全?局",
        "net_double_on": "8点以上で2倍",
        "net_double_off": "8点以上で2倍なし",
        "net_move_time": "一手{s}秒",
        "net_move_time_unknown": "一手?秒",
        "net_move_time_none": "持ち時間なし",
        "net_deck_sealed": "伏せた山札",
        "net_deck_shared": "共有の山札",
        "net_deck_other": "{deck}の山札",
        "net_list": "、",
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
