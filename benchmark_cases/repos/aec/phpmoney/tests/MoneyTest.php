<?php

declare(strict_types=1);

namespace PhpMoney\Tests;

use PhpMoney\Money;
use PHPUnit\Framework\TestCase;

final class MoneyTest extends TestCase
{
    public function testAddsExactly(): void
    {
        $sum = Money::of('0.1', 'EUR')->plus(Money::of('0.2', 'EUR'));
        $this->assertSame('0.30 EUR', (string) $sum);
    }

    public function testKeepsTheCurrencyScale(): void
    {
        $this->assertSame('1500 JPY', (string) Money::of('1500', 'jpy'));
        $this->assertSame('1.250 BHD', (string) Money::of('1.25', 'BHD'));
    }

    public function testMultipliesRoundingHalfAwayFromZero(): void
    {
        $this->assertSame('0.35 USD', (string) Money::of('0.69', 'USD')->times('0.5'));
        $this->assertSame('-0.35 USD', (string) Money::of('-0.69', 'USD')->times('0.5'));
    }

    public function testRefusesMixedCurrencies(): void
    {
        $this->expectException(\DomainException::class);
        Money::of('1', 'EUR')->plus(Money::of('1', 'USD'));
    }

    public function testRefusesFloatsWrittenAsExponents(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Money::of('1e3', 'EUR');
    }
}
