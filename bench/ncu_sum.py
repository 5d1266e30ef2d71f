# ncu_sum.py - sums ncu --csv --metrics gpu__time_duration.sum output by kernel (the time a whole
# call spends in each kernel), for the device scripts: ncu --csv --metrics gpu__time_duration.sum CMD | python3 bench/ncu_sum.py
import csv,sys,collections
tot=collections.defaultdict(float); cnt=collections.Counter()
rows=[l for l in sys.stdin if l.startswith('"')]
for r in csv.DictReader(rows):
    if r.get('Metric Name')!='gpu__time_duration.sum': continue
    v=float(r['Metric Value'].replace(',',''))
    u=r['Metric Unit']
    v = v/1e6 if u=='nsecond' else v/1e3 if u=='usecond' else v if u=='msecond' else v
    k=r['Kernel Name'].split('(')[0][:60]
    tot[k]+=v; cnt[k]+=1
s=sum(tot.values())
for k,v in sorted(tot.items(), key=lambda x:-x[1])[:25]: print(f"{v:9.3f} ms {cnt[k]:6d}x  {k}")
print(f"{s:9.3f} ms total")
