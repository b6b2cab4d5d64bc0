from .calendar import days_in_month, is_leap

__all__ = ["days_in_month", "is_leap"]
