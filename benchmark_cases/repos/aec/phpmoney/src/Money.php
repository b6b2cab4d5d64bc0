<?php

declare(strict_types=1);

namespace PhpMoney;

/** An amount in one currency, held as a decimal string so that 0.1 + 0.2 is 0.30. */
final class Money
{
    private function __construct(public readonly string $amount, public readonly Currency $currency)
    {
    }

    public static function of(string $amount, string $currency): self
    {
        if (preg_match('/^-?\d+(\.\d+)?$/', $amount) !== 1) {
            throw new \InvalidArgumentException("not a decimal amount: {$amount}");
        }
        $unit = Currency::of($currency);
        return new self(bcadd($amount, '0', $unit->scale), $unit);
    }

    public function plus(Money $other): self
    {
        $this->sameCurrency($other);
        return new self(bcadd($this->amount, $other->amount, $this->currency->scale), $this->currency);
    }

    public function times(string $factor): self
    {
        // One more digit than the currency keeps, then rounded half away from zero.
        $scale = $this->currency->scale;
        $raw = bcmul($this->amount, $factor, $scale + 1);
        $half = (str_starts_with($raw, '-') ? '-0.' : '0.') . str_repeat('0', $scale) . '5';
        return new self(bcadd($raw, $half, $scale), $this->currency);
    }

    public function equals(Money $other): bool
    {
        return $this->currency->code === $other->currency->code
            && bccomp($this->amount, $other->amount, $this->currency->scale) === 0;
    }

    public function __toString(): string
    {
        return "{$this->amount} {$this->currency->code}";
    }

    private function sameCurrency(Money $other): void
    {
        if ($this->currency->code !== $other->currency->code) {
            throw new \DomainException(
                "cannot combine {$this->currency->code} and {$other->currency->code}"
            );
        }
    }
}
