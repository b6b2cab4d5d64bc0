<?php

declare(strict_types=1);

namespace PhpMoney;

/** Splits an amount by ratios without losing a cent: the remainder goes to the first shares. */
final class Allocator
{
    /**
     * @param list<int> $ratios
     * @return list<Money>
     */
    public static function allocate(Money $money, array $ratios): array
    {
        $total = array_sum($ratios);
        if ($ratios === [] || $total <= 0 || min($ratios) < 0) {
            throw new \InvalidArgumentException('ratios must be non-negative with a positive sum');
        }
        $scale = $money->currency->scale;
        $unit = bcpow('10', (string) -$scale, $scale);
        $shares = [];
        $left = $money->amount;
        foreach ($ratios as $ratio) {
            // Truncated to the currency's scale: what is left is handed out unit by unit.
            $share = bcdiv(bcmul($money->amount, (string) $ratio, $scale + 4), (string) $total, $scale);
            $shares[] = $share;
            $left = bcsub($left, $share, $scale);
        }
        for ($i = 0; bccomp($left, '0', $scale) > 0; $i++) {
            $shares[$i] = bcadd($shares[$i], $unit, $scale);
            $left = bcsub($left, $unit, $scale);
        }
        return array_map(
            static fn (string $share): Money => Money::of($share, $money->currency->code),
            $shares
        );
    }
}
