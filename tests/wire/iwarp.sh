# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=sh disable=SC2154 # fail, same, exits (crc, src), W, HERE: wire.sh
# The iWARP checks of the wire test: sourced by wire.sh (MODE iwarp) once the
# two siw guests are done and the capture of the cases' TCP streams is there
# (fail, same, W and HERE come from wire.sh). tshark finds MPA by itself on
# these streams (its heuristic sees the MPA request key); a case whose stream
# it does not decode shows no MPA request and fails. For each case of
# WIRE_IWARP_CASES: the client's and server's exit status and the client's
# text; the MPA request (client) and reply (server): revision 2, rdmakit's
# private data length, no reject flag; then each direction's RDMAP messages
# (opcode, DDP tagged or untagged, segments, bytes: see cases.sh), the
# connection's own SYNC messages left out; and the STags: a WRITE's segments
# carry the rkey and (first) the address the server exposed, a READ Request
# names them as its data source and the READ size, the READ Response goes to
# the sink STag the request named.
wire_mode iwarp
hdr=$HERE/../../include/rdmakit/wire.h
hello=$(sed -n 's/^#define RK_WIRE_CM_HELLO_LEN \([0-9]*\).*/\1/p' "$hdr")
sync=$(sed -n 's/^#define RK_WIRE_SYNC_LEN \([0-9]*\).*/\1/p' "$hdr")
if [ -z "$hello" ] || [ -z "$sync" ]; then
	fail header "no RK_WIRE_CM_HELLO_LEN or RK_WIRE_SYNC_LEN in $hdr"
	exit 1
fi
# MPA revision 2 (RFC 6581, which siw speaks) puts its 4 bytes (IRD, ORD)
# ahead of the ULP's private data: rdmakit's CM_HELLO.
pdlen=$((hello + 4))

# One line per frame (several FPDUs in one frame: values joined by ';'),
# TCP retransmissions left out (tshark does not decode them again).
tshark -r "$W/capture.pcapng" -Y '(iwarp_mpa || iwarp_ddp_rdmap) && !tcp.analysis.retransmission' \
	-T fields -E separator='|' -E aggregator=';' -e frame.number -e ip.src -e tcp.srcport \
	-e tcp.dstport -e iwarp_mpa.key.req -e iwarp_mpa.key.rep -e iwarp_mpa.rev \
	-e iwarp_mpa.pdlength -e iwarp_mpa.rej_flag -e iwarp_mpa.ulpdulength -e iwarp_rdma.opcode \
	-e iwarp_ddp.tagged_flag -e iwarp_ddp.last_flag -e iwarp_ddp.stag -e iwarp_ddp.tagged_offset \
	-e iwarp_ddp.qn -e iwarp_rdma.sinkstag -e iwarp_rdma.rdmardsz -e iwarp_rdma.srcstag \
	-e iwarp_rdma.srcto -e iwarp_rdma.term_layer -e iwarp_rdma.term_etype_rdma \
	-e iwarp_rdma.term_etype_ddp -e iwarp_rdma.term_etype_llp -e iwarp_rdma.term_errcode_rdma \
	-e iwarp_rdma.term_errcode_ddp_tagged -e iwarp_rdma.term_errcode_ddp_untagged \
	-e iwarp_rdma.term_errcode_llp >"$W/frames.txt" 2>"$W/tshark.err"
# fpdus.csv, one line per MPA frame or FPDU, fields separated by '|':
#   server port | c2s or s2c | frame | req, rep or fpdu | MPA revision |
#   private data length | reject flag | ULPDU length | RDMAP opcode |
#   tagged | last | STag | tagged offset | queue | sink STag | READ size |
#   source STag | source offset | terminate layer.type.code
# A frame of several FPDUs is split when each field has one value per FPDU
# or none; otherwise it is marked "mixed" (and its case fails, by name).
awk -F'|' -v lo=$((PORT + 1)) -v hi=$((PORT + 99)) '
# num V: the number tshark printed as V (0xNN or decimal).
function num(v,  i, n) {
	if (v !~ /^0x/) return v + 0
	n = 0
	for (i = 3; i <= length(v); i++) n = n * 16 + index("0123456789abcdef", tolower(substr(v, i, 1))) - 1
	return n
}
{
	if ($3 >= lo && $3 <= hi) { port = $3; dir = "s2c" } else { port = $4; dir = "c2s" }
	n = split($11, ops, ";")
	if (n < 1) n = 1
	for (i = 1; i <= n; i++) {
		kind = $5 != "" ? "req" : $6 != "" ? "rep" : "fpdu"
		line = ""
		layer = etype = code = ""
		for (f = 7; f <= 28; f++) {
			m = split($f, v, ";")
			if (m == n) val = v[i]
			else if (m == 0) val = ""
			else { val = "mixed"; kind = "mixed" }
			if (f == 21) layer = val
			else if (f > 21 && f <= 24) etype = etype val
			else if (f > 24) code = code val
			else line = line "|" val
		}
		term = layer == "" ? "" : num(layer) "." num(etype) "." num(code)
		print port "|" dir "|" $1 "|" kind line "|" term
	}
}' "$W/frames.txt" >"$W/fpdus.csv"
echo "wire: $(wc -l <"$W/fpdus.csv") MPA frames and FPDUs captured"

# mpa PORT: the MPA request and reply of PORT's stream, as
# "req rev R pd N rej F, rep rev R pd N rej F" (each once).
mpa() {
	awk -F'|' -v p="$1" '$1 == p && ($4 == "req" || $4 == "rep") {
		out = out (out != "" ? ", " : "") $4 " rev " $5 " pd " $6 " rej " $7
	} END { print out }' "$W/fpdus.csv"
}
# messages PORT DIR: DIR's RDMAP messages on PORT's stream in order, each
# OPCODE/MODEL/SEGMENTS/BYTES (a terminate: /LAYER.TYPE.CODE for BYTES),
# SEGMENTS as counted; the SYNC messages (untagged Sends
# of one segment, RK_WIRE_SYNC_LEN bytes) left out.
messages() {
	awk -F'|' -v p="$1" -v d="$2" -v sync="$sync" '
	BEGIN { name["0x00"] = "write"; name["0x01"] = "readreq"; name["0x02"] = "readresp"
		name["0x03"] = "send"; name["0x07"] = "terminate" }
	$1 == p && $2 == d && $4 != "req" && $4 != "rep" {
		if ($4 == "mixed") { out = out " mixed-frame-" $3; next }
		tagged = $10 == "1" || $10 == "True"
		bytes = $8 - (tagged ? 14 : 18)
		if (!seg && !tagged && $9 == "0x03" && bytes == sync && ($11 == "1" || $11 == "True")) next
		seg++
		sum += bytes
		if ($11 == "1" || $11 == "True") {
			op = ($9 in name) ? name[$9] : "opcode-" $9
			out = out " " op "/" (tagged ? "T" : "U") "/" seg "/" \
			      (op == "terminate" ? $19 : sum)
			seg = 0
			sum = 0
		}
	} END { if (seg) out = out " unfinished"; sub(/^ /, "", out); print out }' "$W/fpdus.csv"
}
# segs_n MESSAGES: MESSAGES with each segment count above 1 written n, as
# cases.sh does (the count itself follows the MSS).
segs_n() {
	echo "$1" | sed 's#/\([2-9]\|[1-9][0-9][0-9]*\)/#/n/#g'
}
# field PORT DIR OPCODE COLUMN: the distinct values of COLUMN of DIR's FPDUs
# of that RDMAP opcode on PORT's stream.
field() {
	awk -F'|' -v p="$1" -v d="$2" -v op="$3" -v c="$4" '$1 == p && $2 == d && $9 == op { print $c }' \
		"$W/fpdus.csv" | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# first PORT DIR OPCODE COLUMN: COLUMN of the first such FPDU.
first() {
	awk -F'|' -v p="$1" -v d="$2" -v op="$3" -v c="$4" '$1 == p && $2 == d && $9 == op { print $c; exit }' \
		"$W/fpdus.csv"
}
# hex VALUE: 0x%x of VALUE (tshark prints 0x with leading zeros).
hex() {
	[ -n "$1" ] && printf '0x%x' "$1"
}

i=0
echo "$CASES" | {
	while IFS="|" read -r name _ cargs outcome c2s s2c text; do
		[ -n "$name" ] || continue
		i=$((i + 1))
		port=$((PORT + i))
		ok=1
		exits "$name" "$outcome" "$text" || ok=0
		got_mpa=$(mpa $port)
		same "$name" "MPA (port $port)" "req rev 2 pd $pdlen rej 0, rep rev 2 pd $pdlen rej 0" \
			"$got_mpa" || ok=0
		got_c2s=$(messages $port c2s)
		got_s2c=$(messages $port s2c)
		same "$name" "client -> server RDMAP messages" "$c2s" "$(segs_n "$got_c2s")" || ok=0
		same "$name" "server -> client RDMAP messages" "$s2c" "$(segs_n "$got_s2c")" || ok=0
		# The server's rkey and address, as the client heard them.
		rkey=$(sed -n 's/^exposing .*, rkey \(0x[0-9a-f]*\),.*/\1/p' "$W/$name.server" 2>/dev/null)
		addr=$(sed -n 's/^server exposes .* at \(0x[0-9a-f]*\), rkey.*/\1/p' "$W/$name.client" 2>/dev/null)
		size=$(echo "$cargs" | sed -n 's/.*-s \([0-9]*\).*/\1/p')
		stags=
		case $c2s in
		write/*)
			got=$(field $port c2s 0x00 12)
			same "$name" "WRITE STag (the server's rkey)" "$rkey" "$(hex "$got")" || ok=0
			same "$name" "WRITE's first tagged offset (the server's address)" "$addr" \
				"$(hex "$(first $port c2s 0x00 13)")" || ok=0
			stags="WRITE STag $rkey at $addr"
			;;
		readreq/*)
			same "$name" "READ Request source STag (the server's rkey)" "$rkey" \
				"$(hex "$(field $port c2s 0x01 17)")" || ok=0
			same "$name" "READ Request source offset (the server's address)" "$addr" \
				"$(hex "$(field $port c2s 0x01 18)")" || ok=0
			same "$name" "READ Request size" "$size" "$(field $port c2s 0x01 16)" || ok=0
			sink=$(hex "$(field $port c2s 0x01 15)")
			[ -z "$(field $port s2c 0x02 9)" ] ||
				same "$name" "READ Response STag (the request's sink STag)" "$sink" \
					"$(hex "$(field $port s2c 0x02 12)")" || ok=0
			stags="READ source STag $rkey at $addr, $size bytes, sink STag $sink"
			;;
		esac
		if [ $ok = 1 ]; then
			echo "ok [$name]: client $crc, server $src, MPA $got_mpa," \
				"client -> server [$got_c2s], server -> client [$got_s2c]${stags:+, $stags}"
		else
			sed 's/^/  client| /' "$W/$name.client" 2>/dev/null | tail -6
			sed 's/^/  server| /' "$W/$name.server" 2>/dev/null | tail -6
		fi
	done
	exit "$fails"
}
fails=$?
if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed; one line per MPA frame or FPDU in $W/fpdus.csv"
	exit 1
fi
echo "all checks passed"
