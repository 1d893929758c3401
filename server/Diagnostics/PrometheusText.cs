using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// Prometheus text format 0.0.4: metric and label names converted from an instrument's, values and
/// help text escaped, numbers as Prometheus reads them.
/// </summary>
internal static class PrometheusText
{
    public const string ContentType = "text/plain; version=0.0.4; charset=utf-8";

    /// <summary>
    /// The metric name of <paramref name="instrument"/>: its name with every character Prometheus does
    /// not allow made <c>_</c> (<c>jackdaw.http.requests</c> → <c>jackdaw_http_requests</c>), the unit's
    /// word appended unless the name ends with it (<c>s</c> → <c>_seconds</c>, <c>By</c> → <c>_bytes</c>;
    /// a unit in braces, <c>{request}</c>, adds nothing), then <c>_total</c> for a counter.
    /// </summary>
    public static string MetricName(Instrument instrument, bool counter)
    {
        var name = Sanitize(instrument.Name, colonAllowed: true);
        if (UnitWord(instrument.Unit) is { } unit && !name.EndsWith("_" + unit, StringComparison.Ordinal))
        {
            name += "_" + unit;
        }
        if (counter && !name.EndsWith("_total", StringComparison.Ordinal))
        {
            name += "_total";
        }
        return name;
    }

    public static string LabelName(string key)
    {
        var name = Sanitize(key, colonAllowed: false);
        // "__" starts the names Prometheus reserves for itself.
        return name.StartsWith("__", StringComparison.Ordinal) ? "_" + name.TrimStart('_') : name;
    }

    private static string? UnitWord(string? unit) => unit switch
    {
        null or "" or "1" => null,
        "s" => "seconds",
        "ms" => "milliseconds",
        "By" => "bytes",
        ['{', .., '}'] => null,
        _ => Sanitize(unit, colonAllowed: false),
    };

    private static string Sanitize(string name, bool colonAllowed)
    {
        var text = new StringBuilder(name.Length + 1);
        foreach (var c in name)
        {
            text.Append(char.IsAsciiLetterOrDigit(c) || c == '_' || (colonAllowed && c == ':') ? c : '_');
        }
        if (text.Length == 0 || char.IsAsciiDigit(text[0]))
        {
            text.Insert(0, '_');
        }
        return text.ToString();
    }

    /// <summary>A label value between double quotes: backslash, double quote and line feed escaped.</summary>
    public static void AppendLabelValue(StringBuilder text, string value)
    {
        text.Append('"');
        foreach (var c in value)
        {
            switch (c)
            {
                case '\\':
                    text.Append("\\\\");
                    break;
                case '"':
                    text.Append("\\\"");
                    break;
                case '\n':
                    text.Append("\\n");
                    break;
                default:
                    text.Append(c);
                    break;
            }
        }
        text.Append('"');
    }

    /// <summary>HELP text: backslash and line feed escaped.</summary>
    public static string EscapeHelp(string help) => help.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\n", "\\n", StringComparison.Ordinal);

    public static string Number(double value) => value switch
    {
        double.PositiveInfinity => "+Inf",
        double.NegativeInfinity => "-Inf",
        double.NaN => "NaN",
        _ => value.ToString("R", CultureInfo.InvariantCulture),
    };

    /// <summary>A tag's value as a label value: strings as they are, numbers invariant, anything else its text.</summary>
    public static string ValueText(object? value) => value switch
    {
        null => "",
        string s => s,
        bool b => b ? "true" : "false",
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "",
    };
}
