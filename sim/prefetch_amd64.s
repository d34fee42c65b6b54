#include "textflag.h"

// func prefetch(p, lines uintptr)
//
// PREFETCHT0 on each of the lines 64-byte cache lines from address p. A
// prefetch is only a hint: it never faults and never changes memory, so p
// may be any address.
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	lines+8(FP), CX
	TESTQ	CX, CX
	JZ	done
loop:
	PREFETCHT0	(AX)
	ADDQ	$64, AX
	DECQ	CX
	JNZ	loop
done:
	RET
