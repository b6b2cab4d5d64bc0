package org.example.bits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BitsTest {
    @Test
    void popCount() {
        assertEquals(3, Bits.popCount(0b1011));
        assertEquals(32, Bits.popCount(-1));
    }

    @Test
    void powerOfTwo() {
        assertTrue(Bits.isPowerOfTwo(64));
        assertFalse(Bits.isPowerOfTwo(0));
        assertFalse(Bits.isPowerOfTwo(12));
    }

    @Test
    void reverse() {
        assertEquals(0x80000000, Bits.reverse(1));
        assertEquals(1, Bits.reverse(0x80000000));
    }
}
