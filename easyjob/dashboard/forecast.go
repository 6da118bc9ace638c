package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The forecast of the group's fires (easyjob.Client.Forecast): a page
// with a chart of the fires per minute and the peak seconds, and the
// API's GET /forecast. It reads every task of the group, so the page is
// not refreshed and its result is cached like the other reads.

// forecastHours are the horizons the page offers; the API takes any
// from 1 to 168.
var forecastHours = []int{6, 24, 72, 168}

// forecastView is the forecast page's data.
type forecastView struct {
	Hours    int
	Choices  []int
	Forecast easyjob.Forecast
	Chart    forecastChart
}

// forecastChart is the bar chart of the fires per bucket (a minute over
// 24 h, wider over longer horizons so the bars stay at most chartBars).
type forecastChart struct {
	W, H, Base int
	Bucket     time.Duration
	Max        int // the tallest bar's fires
	Bars       []forecastBar
	Ticks      []forecastTick
}

type forecastBar struct {
	X, Y, H int
	Title   string
}

type forecastTick struct {
	X     int
	Label string
}

// chartBars bounds the bars of the chart: one pixel each.
const chartBars = 1440

// forecast is the forecast page: ?hours= (24 by default).
func (h *site) forecast(w http.ResponseWriter, r *http.Request) {
	hours, err := forecastParam(r.URL.Query().Get("hours"))
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	f, err := cached(r.Context(), h.cache, "forecast?"+strconv.Itoa(hours), func(ctx context.Context) (easyjob.Forecast, error) {
		return h.client.Forecast(ctx, time.Time{}, time.Duration(hours)*time.Hour)
	})
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	v := forecastView{Hours: hours, Choices: forecastHours, Forecast: f, Chart: buildForecastChart(f)}
	h.render(w, r, http.StatusOK, "forecast", page{Title: "Forecast", Now: f.From, Data: v})
}

// forecastParam reads the hours of a forecast: 24 when absent, else 1 to
// 168.
func forecastParam(s string) (int, error) {
	if s == "" {
		return 24, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 7*24 {
		return 0, fmt.Errorf("hours %q: want a whole number of hours from 1 to 168", s)
	}
	return n, nil
}

// buildForecastChart lays out the bars of f's fires per bucket, scaled
// to the tallest, with a tick every few hours.
func buildForecastChart(f easyjob.Forecast) forecastChart {
	bucket := time.Minute
	for f.Horizon/bucket > chartBars {
		bucket *= 2
	}
	n := int((f.Horizon + bucket - 1) / bucket)
	counts := make([]int, n)
	for i, m := range f.Minutes {
		counts[time.Duration(i)*time.Minute/bucket] += m
	}
	c := forecastChart{W: n, H: 140, Base: 120, Bucket: bucket}
	for _, v := range counts {
		c.Max = max(c.Max, v)
	}
	for i, v := range counts {
		if v == 0 {
			continue
		}
		ht := max(1, v*(c.Base-10)/c.Max)
		at := f.From.Add(time.Duration(i) * bucket).UTC()
		c.Bars = append(c.Bars, forecastBar{X: i, Y: c.Base - ht, H: ht,
			Title: fmt.Sprintf("%s UTC: %d fires in %s", at.Format("Jan 2 15:04"), v, shortDur(bucket))})
	}
	every := 3 * time.Hour
	if f.Horizon > 48*time.Hour {
		every = 24 * time.Hour
	}
	first := f.From.Truncate(every)
	if first.Before(f.From) {
		first = first.Add(every)
	}
	for t := first; t.Before(f.From.Add(f.Horizon)); t = t.Add(every) {
		c.Ticks = append(c.Ticks, forecastTick{X: int(t.Sub(f.From) / bucket), Label: t.UTC().Format("Jan 2 15:04")})
	}
	return c
}

// forecastAnswer is the API's forecast: easyjob.Forecast without its
// every second (the peaks and the minutes say where the load is; a
// million every-second schedules would make it megabytes).
type forecastAnswer struct {
	easyjob.Forecast
	Seconds []easyjob.ForecastSecond `json:"seconds,omitempty"`
	Horizon duration                 `json:"horizon"`
}

// getForecast answers the group's forecast: ?hours= (1 to 168, 24 by
// default), ?top= peak seconds (10 by default, at most 1000).
func (a *API) getForecast(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	hours, err := forecastParam(q.Get("hours"))
	if err != nil {
		return apiErr(http.StatusBadRequest, codeRequest, err.Error())
	}
	top, err := intParam(q, "top", easyjob.ForecastPeaks, 0, 1000)
	if err != nil {
		return err
	}
	f, err := a.client.Forecast(r.Context(), time.Time{}, time.Duration(hours)*time.Hour)
	if err != nil {
		return err
	}
	f.Peaks = f.Top(top)
	writeJSON(w, http.StatusOK, forecastAnswer{Forecast: f, Horizon: duration(f.Horizon)})
	return nil
}
