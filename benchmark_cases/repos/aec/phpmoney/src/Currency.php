<?php

declare(strict_types=1);

namespace PhpMoney;

/** An ISO 4217 currency: its code and how many decimal places its amounts carry. */
final class Currency
{
    private const KNOWN = ['EUR' => 2, 'USD' => 2, 'JPY' => 0, 'BHD' => 3];

    private function __construct(public readonly string $code, public readonly int $scale)
    {
    }

    public static function of(string $code): self
    {
        $upper = strtoupper($code);
        if (!array_key_exists($upper, self::KNOWN)) {
            throw new \InvalidArgumentException("unknown currency: {$code}");
        }
        return new self($upper, self::KNOWN[$upper]);
    }
}
