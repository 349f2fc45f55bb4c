"""What schedules commands: the forget, consolidation and reslot passes, and calibration."""
