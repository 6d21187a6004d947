"""What tests share: builders of API objects, fakes, waits, live servers and property-test sizes."""
