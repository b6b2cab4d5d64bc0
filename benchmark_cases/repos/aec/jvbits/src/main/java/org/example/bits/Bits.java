package org.example.bits;

/** Small bit tricks on ints. */
public final class Bits {
    private Bits() {}

    public static int popCount(int x) {
        int count = 0;
        while (x != 0) {
            x &= x - 1;
            count++;
        }
        return count;
    }

    public static boolean isPowerOfTwo(int x) {
        return x > 0 && (x & (x - 1)) == 0;
    }

    public static int reverse(int x) {
        int out = 0;
        for (int i = 0; i < 32; i++) {
            out = (out << 1) | (x & 1);
            x >>>= 1;
        }
        return out;
    }
}
