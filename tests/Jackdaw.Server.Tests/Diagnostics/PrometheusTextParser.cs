using System.Globalization;
using System.Text;

namespace Jackdaw.Server.Tests.Diagnostics;

/// <summary>
/// A strict reader of Prometheus text format 0.0.4, written from the format's description for
/// these tests: it throws <see cref="FormatException"/> (with the line) on anything a Prometheus
/// server would refuse or that the format forbids: a bad name, a bad escape, a sample before its
/// TYPE or away from its family, a repeated label or HELP or TYPE, a histogram without its +Inf
/// bucket, with buckets that decrease, or with a _count other than its +Inf bucket.
/// </summary>
internal static class PrometheusTextParser
{
    public sealed record Sample(string Name, IReadOnlyDictionary<string, string> Labels, double Value)
    {
        /// <summary>The labels as one sorted string, to match a sample across scrapes.</summary>
        public string Key => Name + "{" + string.Join(",", Labels.OrderBy(l => l.Key, StringComparer.Ordinal).Select(l => $"{l.Key}={l.Value}")) + "}";
    }

    public sealed record Family(string Name, string Type, string Help, List<Sample> Samples);

    public static Dictionary<string, Family> Parse(string text)
    {
        if (text.Length > 0 && !text.EndsWith('\n'))
        {
            throw new FormatException("The exposition does not end with a line feed.");
        }
        var families = new Dictionary<string, Family>(StringComparer.Ordinal);
        var helps = new Dictionary<string, string>(StringComparer.Ordinal);
        var closed = new HashSet<string>(StringComparer.Ordinal);
        Family? current = null;
        var number = 0;
        foreach (var line in text.Split('\n'))
        {
            number++;
            if (line.Length == 0)
            {
                continue;
            }
            try
            {
                if (line.StartsWith('#'))
                {
                    var parts = line.Split(' ', 4);
                    if (parts.Length >= 3 && parts[0] == "#" && parts[1] is "HELP" or "TYPE")
                    {
                        var name = parts[2];
                        CheckMetricName(name);
                        if (parts[1] == "HELP")
                        {
                            if (!helps.TryAdd(name, Unescape(parts.Length > 3 ? parts[3] : "", help: true)))
                            {
                                throw new FormatException("HELP repeated");
                            }
                        }
                        else
                        {
                            var type = parts.Length > 3 ? parts[3] : throw new FormatException("TYPE without a type");
                            if (type is not ("counter" or "gauge" or "histogram" or "summary" or "untyped"))
                            {
                                throw new FormatException("unknown type " + type);
                            }
                            if (families.ContainsKey(name))
                            {
                                throw new FormatException("TYPE repeated, or after its samples");
                            }
                            if (current is not null)
                            {
                                closed.Add(current.Name);
                            }
                            current = new Family(name, type, helps.GetValueOrDefault(name, ""), []);
                            families.Add(name, current);
                        }
                    }
                    continue;
                }
                PrometheusTextParser.Sample sample;
                try
                {
                    sample = ParseSample(line);
                }
                catch (IndexOutOfRangeException)
                {
                    throw new FormatException("the line ends inside its labels");
                }
                var family = FamilyOf(sample.Name, families);
                if (family is null)
                {
                    throw new FormatException("a sample without a TYPE before it");
                }
                if (!ReferenceEquals(family, current) || closed.Contains(family.Name))
                {
                    throw new FormatException("a sample away from the rest of its family");
                }
                family.Samples.Add(sample);
            }
            catch (FormatException e)
            {
                throw new FormatException($"Line {number}: {e.Message}: {line}", e);
            }
        }
        foreach (var family in families.Values)
        {
            if (family.Type == "histogram")
            {
                CheckHistogram(family);
            }
            if (family.Type == "counter" && family.Samples.Any(s => s.Value < 0 || double.IsNaN(s.Value)))
            {
                throw new FormatException($"Counter {family.Name} has a negative or NaN value.");
            }
        }
        return families;
    }

    private static Family? FamilyOf(string sampleName, Dictionary<string, Family> families)
    {
        if (families.TryGetValue(sampleName, out var exact))
        {
            return exact;
        }
        foreach (var suffix in new[] { "_bucket", "_sum", "_count" })
        {
            if (sampleName.EndsWith(suffix, StringComparison.Ordinal) && families.TryGetValue(sampleName[..^suffix.Length], out var family) && family.Type is "histogram" or "summary")
            {
                return family;
            }
        }
        return null;
    }

    private static Sample ParseSample(string line)
    {
        var i = 0;
        while (i < line.Length && line[i] is not ('{' or ' '))
        {
            i++;
        }
        var name = line[..i];
        CheckMetricName(name);
        var labels = new Dictionary<string, string>(StringComparer.Ordinal);
        if (i < line.Length && line[i] == '{')
        {
            i++;
            while (line[i] != '}')
            {
                var start = i;
                while (line[i] != '=')
                {
                    i++;
                }
                var label = line[start..i];
                CheckLabelName(label);
                i++;
                if (line[i] != '"')
                {
                    throw new FormatException("a label value not in double quotes");
                }
                i++;
                var value = new StringBuilder();
                while (line[i] != '"')
                {
                    if (line[i] == '\\')
                    {
                        i++;
                        value.Append(line[i] switch
                        {
                            '\\' => '\\',
                            '"' => '"',
                            'n' => '\n',
                            _ => throw new FormatException($"bad escape \\{line[i]}"),
                        });
                    }
                    else
                    {
                        value.Append(line[i]);
                    }
                    i++;
                }
                i++;
                if (!labels.TryAdd(label, value.ToString()))
                {
                    throw new FormatException("label repeated: " + label);
                }
                if (line[i] == ',')
                {
                    i++;
                }
                else if (line[i] != '}')
                {
                    throw new FormatException("labels not separated by a comma");
                }
            }
            i++;
        }
        if (i >= line.Length || line[i] != ' ')
        {
            throw new FormatException("no space before the value");
        }
        var rest = line[(i + 1)..].Split(' ');
        if (rest.Length is 0 or > 2)
        {
            throw new FormatException("not a value and an optional timestamp");
        }
        return new Sample(name, labels, ParseValue(rest[0]));
    }

    public static double ParseValue(string text) => text switch
    {
        "+Inf" => double.PositiveInfinity,
        "-Inf" => double.NegativeInfinity,
        "NaN" => double.NaN,
        _ => double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) ? value : throw new FormatException("not a number: " + text),
    };

    private static void CheckHistogram(Family family)
    {
        foreach (var series in family.Samples.GroupBy(s => string.Join(",", s.Labels.Where(l => l.Key != "le").OrderBy(l => l.Key, StringComparer.Ordinal).Select(l => l.Key + "=" + l.Value))))
        {
            var buckets = series.Where(s => s.Name == family.Name + "_bucket").ToList();
            if (buckets.Count == 0 || buckets.Any(b => !b.Labels.ContainsKey("le")))
            {
                throw new FormatException($"Histogram {family.Name}{{{series.Key}}} has no buckets, or one without le.");
            }
            if (buckets[^1].Labels["le"] != "+Inf")
            {
                throw new FormatException($"Histogram {family.Name}{{{series.Key}}} does not end with le=\"+Inf\".");
            }
            for (var i = 1; i < buckets.Count; i++)
            {
                if (ParseValue(buckets[i].Labels["le"]) <= ParseValue(buckets[i - 1].Labels["le"]) || buckets[i].Value < buckets[i - 1].Value)
                {
                    throw new FormatException($"Histogram {family.Name}{{{series.Key}}}: buckets out of order or decreasing.");
                }
            }
            var count = series.SingleOrDefault(s => s.Name == family.Name + "_count") ?? throw new FormatException($"Histogram {family.Name}{{{series.Key}}} has no _count.");
            _ = series.SingleOrDefault(s => s.Name == family.Name + "_sum") ?? throw new FormatException($"Histogram {family.Name}{{{series.Key}}} has no _sum.");
            if (count.Value != buckets[^1].Value)
            {
                throw new FormatException($"Histogram {family.Name}{{{series.Key}}}: _count {count.Value} is not its +Inf bucket {buckets[^1].Value}.");
            }
        }
    }

    private static void CheckMetricName(string name)
    {
        if (name.Length == 0 || !(char.IsAsciiLetter(name[0]) || name[0] is '_' or ':') || !name.All(c => char.IsAsciiLetterOrDigit(c) || c is '_' or ':'))
        {
            throw new FormatException("bad metric name '" + name + "'");
        }
    }

    private static void CheckLabelName(string name)
    {
        if (name.Length == 0 || !(char.IsAsciiLetter(name[0]) || name[0] == '_') || !name.All(c => char.IsAsciiLetterOrDigit(c) || c == '_') || name.StartsWith("__", StringComparison.Ordinal))
        {
            throw new FormatException("bad label name '" + name + "'");
        }
    }

    private static string Unescape(string text, bool help)
    {
        var result = new StringBuilder();
        for (var i = 0; i < text.Length; i++)
        {
            if (text[i] != '\\')
            {
                result.Append(text[i]);
                continue;
            }
            i++;
            result.Append(i < text.Length ? text[i] switch
            {
                '\\' => '\\',
                'n' => '\n',
                '"' when !help => '"',
                _ => throw new FormatException("bad escape in HELP"),
            } : throw new FormatException("HELP ends with a backslash"));
        }
        return result.ToString();
    }
}
