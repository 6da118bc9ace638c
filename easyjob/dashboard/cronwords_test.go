package dashboard

import "testing"

func TestDescribeCron(t *testing.T) {
	for _, c := range []struct{ cron, tz, want string }{
		{"", "", "after every successful run of its parent"},
		{"* * * * * *", "", "every second"},
		{"*/10 * * * * *", "", "every 10 seconds"},
		{"* * * * *", "", "every minute"},
		{"15 * * * * *", "", "every minute at second 15"},
		{"0 */5 * * * *", "", "every 5 minutes"},
		{"*/15 * * * *", "", "every 15 minutes"},
		{"0 7 * * * *", "", "every hour at minute 7"},
		{"0 0 */6 * * *", "", "every 6 hours at minute 0"},
		{"30 2 * * *", "", "every day at 02:30"},
		{"0 30 9 * * 1-5", "", "at 09:30 on Monday to Friday"},
		{"0 0 9,17 * * *", "", "every day at 09:00 and 17:00"},
		{"0 0 0 1 1 *", "", "every year on 1 January at 00:00"},
		{"0 0 1 * *", "", "at 00:00 on day 1 of the month"},
		{"0 0 L * *", "", "at 00:00 on the last day of the month"},
		{"0 12 * * MON,WED,FRI", "", "at 12:00 on Monday, Wednesday and Friday"},
		{"0 0 * 1-3 *", "", "every day at 00:00 in January to March"},
		{"0 0 0 1 1 * 2030", "", "every year on 1 January at 00:00 year 2030"},
		{"@hourly", "", "every hour at minute 0"},
		{"@daily", "Europe/Paris", "every day at 00:00 (Europe/Paris)"},
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", "", "every day at 09:00 (Asia/Tokyo)"},
		{"1-5 * * * * *", "", "second 1 to 5, every minute, every hour"},
		{"0 0 ? * 0", "", "at 00:00 on Sunday"},
		{"bad", "", "bad"},
	} {
		if got := describeCron(c.cron, c.tz); got != c.want {
			t.Errorf("describeCron(%q, %q) = %q, want %q", c.cron, c.tz, got, c.want)
		}
	}
}
