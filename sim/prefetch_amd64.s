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

// func prefetch2(a, b uintptr)
//
// PREFETCHT0 on the 64-byte cache lines at addresses a and b.
TEXT ·prefetch2(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	a+0(FP), AX
	MOVQ	b+8(FP), BX
	PREFETCHT0	(AX)
	PREFETCHT0	(BX)
	RET
